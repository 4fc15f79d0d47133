package dnstest

import kurzdns "github.com/kurz-dev/kurz/internal/dns"

// Options returns the default verifier options, asking this server, with
// targets as the redirect targets.
func (s *Server) Options(targets ...string) kurzdns.Options {
	o := kurzdns.DefaultOptions()
	o.Server, o.Targets = s.Addr, targets
	return o
}
