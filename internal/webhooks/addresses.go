package webhooks

import (
	"fmt"
	"net/netip"
)

// The address ranges a delivery never connects to unless a flag allows
// them. The list follows the (and the usual SSRF advice): nothing
// that reaches the node, the pod network or the cloud's control plane.
var (
	// loopback: the process's own host (127.0.0.0/8, ::1).
	loopback = []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("::1/128"),
	}
	// private: RFC 1918, IPv6 unique local, CGNAT (shared address space,
	// which some clusters use for pods and Services).
	private = []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("192.168.0.0/16"),
		netip.MustParsePrefix("fc00::/7"),
		netip.MustParsePrefix("100.64.0.0/10"),
	}
	// never: link-local (the metadata service 169.254.169.254 and its IPv6
	// twin fd00:ec2::254 is ULA, above), unspecified, multicast, broadcast,
	// "this network", the IETF protocol and documentation ranges, NAT64's
	// well-known prefix (it embeds any IPv4 address) and IPv4-mapped IPv6
	// addresses, which are checked as their IPv4 address instead.
	never = []netip.Prefix{
		netip.MustParsePrefix("169.254.0.0/16"),
		netip.MustParsePrefix("fe80::/10"),
		netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("::/128"),
		netip.MustParsePrefix("224.0.0.0/4"),
		netip.MustParsePrefix("ff00::/8"),
		netip.MustParsePrefix("255.255.255.255/32"),
		netip.MustParsePrefix("192.0.0.0/24"),
		netip.MustParsePrefix("64:ff9b::/96"),
		netip.MustParsePrefix("64:ff9b:1::/48"),
		netip.MustParsePrefix("2002::/16"), // 6to4 embeds an IPv4 address too
		netip.MustParsePrefix("240.0.0.0/4"),
	}
)

// addressPolicy says which addresses one Webhook may connect to.
type addressPolicy struct {
	// loopback allows 127.0.0.0/8 and ::1 (--webhook-allow-loopback).
	loopback bool
	// private allows the private and CGNAT ranges: only for a Webhook
	// whose URL names a Service of its own namespace, with
	// --webhook-allow-cluster-services (ClusterIPs are private addresses).
	private bool
}

// RefusedError is a connection kurz would not open: the address is in a
// range the policy refuses. Its message names the address and the range's
// kind, never the URL (which may carry a token in its path).
type RefusedError struct {
	Addr netip.Addr
	Kind string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s is a %s address", e.Addr, e.Kind)
}

// check returns a *RefusedError when p refuses a.
func (p addressPolicy) check(a netip.Addr) error {
	a = a.Unmap()
	if a.Zone() != "" {
		a = a.WithZone("")
	}
	switch {
	case !a.IsValid():
		return &RefusedError{Addr: a, Kind: "invalid"}
	case in(a, loopback):
		if !p.loopback {
			return &RefusedError{Addr: a, Kind: "loopback"}
		}
		return nil
	case a == metadataAddress:
		return &RefusedError{Addr: a, Kind: "metadata service"}
	case a.IsLinkLocalUnicast():
		return &RefusedError{Addr: a, Kind: "link-local"}
	case in(a, never):
		return &RefusedError{Addr: a, Kind: "reserved"}
	case in(a, private):
		if !p.private {
			return &RefusedError{Addr: a, Kind: "private"}
		}
		return nil
	}
	return nil
}

// metadataAddress is the cloud metadata service (AWS, GCP, Azure, ...),
// named in refusals because it is the address SSRF attacks aim at.
var metadataAddress = netip.MustParseAddr("169.254.169.254")

func in(a netip.Addr, prefixes []netip.Prefix) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
