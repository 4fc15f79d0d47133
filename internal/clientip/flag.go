package clientip

import (
	"flag"
	"net/netip"
)

// BindTrustedProxies registers name on fs: comma-separated CIDRs parsed by
// ParseTrustedProxies into *dst. The API and the redirect server each have
// one such flag.
func BindTrustedProxies(fs *flag.FlagSet, dst *[]netip.Prefix, name, usage string) {
	fs.Func(name, usage, func(s string) error {
		p, err := ParseTrustedProxies(s)
		*dst = p
		return err
	})
}
