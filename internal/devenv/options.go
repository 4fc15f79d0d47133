package devenv

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/kurz-dev/kurz/internal/flagbind"
	"github.com/kurz-dev/kurz/internal/restapi"
)

// DefaultDataDir is where kurz dev keeps its state unless told otherwise.
const DefaultDataDir = ".kurz"

// Options configure Start. They start from DefaultOptions: Start fills
// nothing in.
type Options struct {
	// DataDir holds the control plane's state; see the package doc.
	DataDir string `flag:"data-dir" usage:"Directory holding the local control plane's state (etcd data, keys, kubeconfig, token); kept across restarts."`
	// Out receives progress lines.
	Out io.Writer
	// TokenAudience is the audience DIR/token is minted for: one the API
	// server accepts (--api-token-audiences).
	TokenAudience string
	// GatewayAPI installs the Gateway API's standard-channel CRDs when the
	// control plane has none (kurz dev --gateway-class or --gateway).
	GatewayAPI bool
	// LinksWatchCache keeps kube-apiserver's watch cache for Links. It is
	// off by default: at a million Links the cache would cost more memory
	// than the rest of the control plane (docs/scaling.md), and
	// kurz reads Links from its own informers anyway.
	LinksWatchCache bool `flag:"links-watch-cache" usage:"Keep kube-apiserver's watch cache for Links (off: lists and watches of Links go to etcd, which costs far less memory at hundreds of thousands of Links)."`
	// KubeAPIServerGOGC is kube-apiserver's GOGC (DefaultKubeAPIServerGOGC).
	KubeAPIServerGOGC int `flag:"kube-apiserver-gogc" usage:"GOGC of kube-apiserver: how far its heap grows between collections, in percent of what is live (Go's default is 100; more settles bulk imports faster for more memory)."`
	// EtcdQuotaBytes is etcd's --quota-backend-bytes.
	EtcdQuotaBytes int64 `flag:"etcd-quota-backend-bytes" usage:"etcd's storage quota in bytes (--quota-backend-bytes); a million Links take 1.94 GiB before the controllers write their status, more until kube-apiserver compacts old revisions."`
	// ReservedPorts are loopback ports etcd and kube-apiserver must not
	// take: those of the listeners kurz dev opens after starting them.
	ReservedPorts []int
}

// DefaultOptions returns the defaults: DefaultDataDir, no progress lines,
// the API's default token audience.
func DefaultOptions() Options {
	return Options{DataDir: DefaultDataDir, Out: io.Discard, TokenAudience: restapi.DefaultTokenAudience,
		KubeAPIServerGOGC: DefaultKubeAPIServerGOGC, EtcdQuotaBytes: DefaultEtcdQuotaBytes}
}

// BindFlags registers the local control plane's flag on fs, with o's value
// as default.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	flagbind.Fields(fs, o)
}

// Validate rejects options Start cannot run with; the message names the
// flag, or the field where there is none.
func (o Options) Validate() error {
	var errs []error
	if o.DataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty"))
	}
	if o.Out == nil {
		errs = append(errs, errors.New("devenv: Out must be set (io.Discard for no progress lines)"))
	}
	if o.TokenAudience == "" {
		errs = append(errs, errors.New("devenv: TokenAudience must not be empty (the first of --api-token-audiences)"))
	}
	if o.KubeAPIServerGOGC <= 0 {
		errs = append(errs, fmt.Errorf("--kube-apiserver-gogc must be positive, not %d", o.KubeAPIServerGOGC))
	}
	if o.EtcdQuotaBytes <= 0 {
		errs = append(errs, fmt.Errorf("--etcd-quota-backend-bytes must be positive, not %d", o.EtcdQuotaBytes))
	}
	return errors.Join(errs...)
}
