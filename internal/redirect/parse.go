package redirect

import (
	"bytes"
	"net/url"
	"strings"
)

// maxHostLen is the longest DNS name; longer Host headers match nothing.
const maxHostLen = 253

// normalizeHost turns a Host header into the index's form: lowercase, without
// port and trailing dot. It writes into buf (at least maxHostLen bytes) only
// when it must change case, so the common lowercase Host costs no copy. It
// returns false for hosts that can never match a Domain.
func normalizeHost(h []byte, buf []byte) ([]byte, bool) {
	if len(h) > 0 && h[0] == '[' {
		// IPv6 literal: never a Domain (spec.domain is a DNS name).
		return nil, false
	}
	if i := bytes.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	if n := len(h); n > 0 && h[n-1] == '.' {
		h = h[:n-1]
	}
	if len(h) == 0 || len(h) > maxHostLen {
		return nil, false
	}
	for i, c := range h {
		if 'A' <= c && c <= 'Z' {
			out := buf[:len(h)]
			copy(out, h[:i])
			for j := i; j < len(h); j++ {
				c := h[j]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				out[j] = c
			}
			return out, true
		}
	}
	return h, true
}

// maxKeyLen is the longest spec.key the CRD admits.
const maxKeyLen = 64

// parseKey splits a request path into a link key. root is true for "/".
// ok is false for paths that cannot be a key (they answer like an unknown key).
func parseKey(path []byte) (key []byte, root, ok bool) {
	if len(path) == 0 || path[0] != '/' {
		return nil, false, false
	}
	key = path[1:]
	if len(key) == 0 {
		return nil, true, false
	}
	if len(key) > maxKeyLen {
		return nil, false, false
	}
	for _, c := range key {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return nil, false, false
		}
	}
	return key, false, true
}

type deviceKind uint8

const (
	deviceOther deviceKind = iota
	deviceIOS
	deviceAndroid
)

var (
	uaIP      = []byte("iP")
	uaAndroid = []byte("Android")
)

// device classifies a User-Agent: iOS if it names an iPhone, iPad or iPod,
// else Android if it says so. iPadOS Safari in desktop mode claims to be a
// Mac and is not recognised; that is the usual limitation of UA sniffing.
// The three iOS names are found in one pass for "iP" (a browser's UA, with
// none of them, is scanned twice, not four times: this runs on every click
// of a link with device targets).
func device(ua []byte) deviceKind {
	for rest := ua; ; {
		i := bytes.Index(rest, uaIP)
		if i < 0 {
			break
		}
		rest = rest[i+len(uaIP):]
		if bytes.HasPrefix(rest, []byte("hone")) || bytes.HasPrefix(rest, []byte("ad")) || bytes.HasPrefix(rest, []byte("od")) {
			return deviceIOS
		}
	}
	if bytes.Contains(ua, uaAndroid) {
		return deviceAndroid
	}
	return deviceOther
}

// mergeQuery forwards the short URL's query into the destination: the
// request's parameters replace same-named ones of the destination and are
// appended after the others. Both sides keep their raw encoding.
func mergeQuery(dest, reqQuery string) string {
	if reqQuery == "" {
		return dest
	}
	reqKeys := map[string]struct{}{}
	var reqPairs []string
	for _, p := range strings.Split(reqQuery, "&") {
		if p == "" {
			continue
		}
		reqPairs = append(reqPairs, p)
		reqKeys[queryKey(p)] = struct{}{}
	}
	if len(reqPairs) == 0 {
		return dest
	}
	base, frag, hasFrag := strings.Cut(dest, "#")
	path, query, _ := strings.Cut(base, "?")
	var kept []string
	for _, p := range strings.Split(query, "&") {
		if p == "" {
			continue
		}
		if _, dup := reqKeys[queryKey(p)]; !dup {
			kept = append(kept, p)
		}
	}
	out := path + "?" + strings.Join(append(kept, reqPairs...), "&")
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// queryKey is the decoded name of a raw "name=value" pair.
func queryKey(pair string) string {
	k, _, _ := strings.Cut(pair, "=")
	if d, err := url.QueryUnescape(k); err == nil {
		return d
	}
	return k
}
