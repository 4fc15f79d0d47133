// Package controllerstest holds what the tests of the controllers and of
// the manager that runs them share.
package controllerstest

import (
	"time"

	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
)

// Options are the default controller options with domains verified against
// srv (targets as the redirect targets) and DNS rechecks and backoffs short
// enough for a test to watch them happen.
func Options(srv *dnstest.Server, targets ...string) controllers.Options {
	o := controllers.DefaultOptions()
	o.DNS = srv.Options(targets...)
	o.DNS.Timeout = 5 * time.Second
	o.DNSRecheckInterval = time.Second
	o.PendingBackoff = 100 * time.Millisecond
	o.PendingBackoffMax = 500 * time.Millisecond
	return o
}
