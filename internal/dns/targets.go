package dns

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Targets are the redirect targets a domain may point at: hostnames (matched
// by CNAME, and by address after resolving them) and IP addresses.
type Targets struct {
	hosts []string
	ips   []netip.Addr
}

// ParseTargets normalizes targets: hostnames lowercased without a trailing
// dot, IPs parsed. Empty entries are skipped.
func ParseTargets(raw []string) (Targets, error) {
	var t Targets
	for _, s := range raw {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if ip, err := netip.ParseAddr(s); err == nil {
			t.ips = append(t.ips, ip.Unmap())
			continue
		}
		h := strings.ToLower(strings.TrimSuffix(s, "."))
		if !validHostname(h) {
			return Targets{}, fmt.Errorf("redirect target %q: not a hostname or an IP address", s)
		}
		t.hosts = append(t.hosts, h)
	}
	return t, nil
}

// Empty reports whether there are no targets.
func (t Targets) Empty() bool { return len(t.hosts) == 0 && len(t.ips) == 0 }

// MatchHost returns the hostname target name equals, if any.
func (t Targets) MatchHost(name string) (string, bool) {
	for _, h := range t.hosts {
		if sameName(h, name) {
			return h, true
		}
	}
	return "", false
}

// sameName compares DNS names case-insensitively, ignoring a trailing dot.
func sameName(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// validHostname accepts dot-separated labels of letters, digits, '-' and
// '_' (1-63 characters each), 253 characters at most.
func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			default:
				return false
			}
		}
	}
	return true
}

// Addresses resolves the targets to addresses: IP targets as they are,
// hostname targets through r. A target that does not resolve is left out,
// so one broken target does not fail every check.
func (t Targets) Addresses(ctx context.Context, r *net.Resolver) map[netip.Addr]string {
	out := make(map[netip.Addr]string, len(t.ips)+len(t.hosts))
	for _, ip := range t.ips {
		out[ip] = ip.String()
	}
	for _, h := range t.hosts {
		addrs, err := r.LookupNetIP(ctx, "ip", h+".")
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if _, seen := out[a.Unmap()]; !seen {
				out[a.Unmap()] = h
			}
		}
	}
	return out
}
