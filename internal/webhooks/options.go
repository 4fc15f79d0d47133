package webhooks

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/kurz-dev/kurz/internal/flagbind"
)

// Options configure webhook delivery on a replica.
type Options struct {
	// AllowLoopback lets Webhooks reach loopback addresses (127.0.0.0/8,
	// ::1): receivers on the same machine, for `kurz dev` (which turns it
	// on) and tests. Off in `kurz manager`: in a pod, loopback is the pod
	// itself (kurz's own metrics and probes, sidecars).
	AllowLoopback bool `flag:"webhook-allow-loopback" usage:"Let Webhooks deliver to loopback addresses (127.0.0.0/8, ::1); for kurz dev and tests, never in a shared cluster."`
	// AllowClusterServices lets a Webhook reach a Service of its own
	// namespace by name (http or https://<service>.<namespace>.svc...),
	// whose ClusterIP is a private address.
	AllowClusterServices bool `flag:"webhook-allow-cluster-services" usage:"Let a Webhook deliver to a Service of its own namespace (http:// or https://<service>.<namespace>.svc[.cluster.local]), whose address is private; other private addresses stay refused."`
	// CAFile is a PEM file of certificate authorities trusted for
	// receivers, besides the system's: for receivers with certificates of
	// a private CA.
	CAFile string `flag:"webhook-ca-file" usage:"PEM file of certificate authorities to trust for webhook receivers, besides the system's (for receivers with certificates of a private CA)."`
	// DNSServer resolves receivers' names (host:port); empty: the system
	// resolver. Whatever answers, the address connected to is checked.
	DNSServer string `flag:"webhook-dns-server" usage:"DNS server (host:port) webhook receivers' names are resolved with; empty uses the system resolver. The addresses it answers are checked all the same."`
	// QueueBytes bounds the deliveries waiting for one Webhook on a
	// replica, in bytes of their bodies (plus 128 each); past it new
	// events for that Webhook are dropped and counted
	// (kurz_webhook_dropped_total{reason="queue_full"}). 2 MiB hold about
	// 2 000 change events or 60 full link.clicked batches.
	QueueBytes int64 `flag:"webhook-queue-bytes" usage:"Bytes of deliveries waiting per Webhook and replica; more are dropped and counted."`
}

// DefaultOptions returns the production defaults: no loopback, no cluster
// Services, the system's CAs and resolver, 2 MiB of waiting deliveries
// per Webhook.
func DefaultOptions() Options {
	return Options{QueueBytes: 2 << 20}
}

// BindFlags registers the flags on fs, with o's values as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	flagbind.Fields(fs, o)
}

// Validate rejects options delivery cannot run with; every message names
// the flag.
func (o Options) Validate() error {
	var errs []error
	if o.QueueBytes < 64<<10 || o.QueueBytes > 1<<30 {
		errs = append(errs, fmt.Errorf("--webhook-queue-bytes must be between 65536 and 1073741824, got %d", o.QueueBytes))
	}
	if o.DNSServer != "" {
		if _, _, err := net.SplitHostPort(o.DNSServer); err != nil {
			errs = append(errs, fmt.Errorf("--webhook-dns-server %q: want host:port: %w", o.DNSServer, err))
		}
	}
	if o.CAFile != "" {
		if _, err := o.certPool(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// certPool is the system's CAs plus CAFile's.
func (o Options) certPool() (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if o.CAFile == "" {
		return pool, nil
	}
	pem, err := os.ReadFile(o.CAFile)
	if err != nil {
		return nil, fmt.Errorf("--webhook-ca-file: %w", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--webhook-ca-file %s: no PEM certificate in it", o.CAFile)
	}
	return pool, nil
}

// resolver is the resolver of receivers' names.
func (o Options) resolver() *net.Resolver {
	if o.DNSServer == "" {
		return net.DefaultResolver
	}
	server := o.DNSServer
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, server)
		},
	}
}
