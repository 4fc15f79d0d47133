package apiserver

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/clientip"
)

// The API server reviews tokens and access for every caller, reads and
// writes Links and Domains (and their status, for the created/updated
// stamps), and reads namespaces for workspace ids.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups=kurz.dev,resources=links;domains,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=kurz.dev,resources=links/status;domains/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Options configure the API server.
type Options struct {
	// BindAddress is where the server listens (--api-bind-address).
	BindAddress string
	// Listener, when set, is served instead of listening on BindAddress
	// (tests and `kurz dev` use it to learn the port of "127.0.0.1:0").
	Listener net.Listener
	// PublicURL is the scheme://host[:port] clients reach the API at, used in
	// pagination links; empty means the request's own scheme and Host.
	PublicURL string
	// RateLimit is the number of requests per minute allowed per caller
	// (ServiceAccount uid, whichever of its tokens it uses); 0 disables the
	// limit.
	RateLimit int
	// UnauthenticatedRateLimit is the number of requests per minute allowed
	// per client address for tokens not known to be good (each may cost a
	// TokenReview), counted before authentication; 0 disables the limit.
	UnauthenticatedRateLimit int
	// TrustedProxies are the networks of the proxies in front of the API;
	// from those peers the client is read from X-Forwarded-For.
	TrustedProxies []netip.Prefix
	// TokenAudiences are the audiences an API token must be minted for;
	// TokenReview is asked for them, so a token for kube-apiserver (any
	// pod's default token) is not an API token, nor an API token a
	// kube-apiserver credential.
	TokenAudiences []string
	// AuthCacheTTL is how long token and access decisions are reused.
	AuthCacheTTL time.Duration
	// WriteWait bounds how long a write waits for the cache to observe it
	// before answering (read-your-writes).
	WriteWait time.Duration
	// QRCacheSize is how many rendered QR images are kept.
	QRCacheSize int
	// ShutdownTimeout bounds the graceful shutdown.
	ShutdownTimeout time.Duration
}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		BindAddress: ":8080",
		RateLimit:   600,
		// 120 unknown tokens a minute per address: a client's tokens each
		// need a review once per AuthCacheTTL, guessing needs far more.
		UnauthenticatedRateLimit: 120,
		TokenAudiences:           []string{DefaultTokenAudience},
		AuthCacheTTL:             10 * time.Second,
		WriteWait:                10 * time.Second,
		QRCacheSize:              1024,
		ShutdownTimeout:          10 * time.Second,
	}
}

// DefaultTokenAudience is the audience API tokens are minted for:
// `kubectl create token SA --audience kurz`.
const DefaultTokenAudience = "kurz"

// BindFlags registers the API server's flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.BindAddress, "api-bind-address", o.BindAddress, "Address the /api/v1 server listens on.")
	fs.StringVar(&o.PublicURL, "api-public-url", o.PublicURL, "Public base URL of the API (scheme://host[:port]) used in pagination links; empty uses each request's scheme and Host.")
	fs.IntVar(&o.RateLimit, "api-rate-limit", o.RateLimit, "Requests per minute allowed per ServiceAccount, whichever of its API tokens it uses; 0 disables the limit.")
	fs.IntVar(&o.UnauthenticatedRateLimit, "api-unauthenticated-rate-limit", o.UnauthenticatedRateLimit, "Requests per minute allowed per client address with a token not yet known to be good (checked before the TokenReview); 0 disables the limit.")
	fs.Func("api-trusted-proxies", "Comma-separated CIDRs of the proxies in front of the API (e.g. the ingress); from those peers the client address is taken from X-Forwarded-For (default: none, the TCP peer is the client).", func(s string) error {
		p, err := clientip.ParseTrustedProxies(s)
		o.TrustedProxies = p
		return err
	})
	fs.Var(&audiencesFlag{list: &o.TokenAudiences}, "api-token-audiences", "Audiences an API token must be minted for (comma-separated, repeatable); TokenReview is asked for them.")
	fs.DurationVar(&o.AuthCacheTTL, "api-auth-cache-ttl", o.AuthCacheTTL, "How long TokenReview and SubjectAccessReview answers are reused.")
}

func (o Options) validate() error {
	if o.Listener == nil && o.BindAddress == "" {
		return fmt.Errorf("api server: no bind address")
	}
	if o.RateLimit < 0 {
		return fmt.Errorf("api server: --api-rate-limit must not be negative")
	}
	if o.UnauthenticatedRateLimit < 0 {
		return fmt.Errorf("api server: --api-unauthenticated-rate-limit must not be negative")
	}
	if len(o.TokenAudiences) == 0 {
		// No audience would accept kube-apiserver's own tokens again.
		return fmt.Errorf("api server: --api-token-audiences must name at least one audience")
	}
	for _, a := range o.TokenAudiences {
		if a == "" {
			return fmt.Errorf("api server: --api-token-audiences: empty audience")
		}
	}
	if o.PublicURL != "" {
		if err := checkPublicURL(o.PublicURL); err != nil {
			return err
		}
	}
	return nil
}

// Setup adds the API server to mgr. It runs on every replica. Call it
// before mgr starts: it registers the list indexes on the cache's informers.
func Setup(mgr ctrl.Manager, o Options) error {
	d := DefaultOptions()
	if o.AuthCacheTTL <= 0 {
		o.AuthCacheTTL = d.AuthCacheTTL
	}
	if o.WriteWait <= 0 {
		o.WriteWait = d.WriteWait
	}
	if o.QRCacheSize <= 0 {
		o.QRCacheSize = d.QRCacheSize
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = d.ShutdownTimeout
	}
	if err := o.validate(); err != nil {
		return err
	}
	s := newServer(mgr.GetClient(), mgr.GetAPIReader(), o)

	// Creating the informers now (the cache is not started yet, so this does
	// not block) makes the manager wait for them to sync before it starts
	// the server, so the first request already sees every object.
	ctx := context.Background()
	linkInformer, err := mgr.GetCache().GetInformer(ctx, &kurzv1alpha1.Link{})
	if err != nil {
		return fmt.Errorf("api server: Link informer: %w", err)
	}
	if err := s.links.index.Register(linkInformer); err != nil {
		return err
	}
	domainInformer, err := mgr.GetCache().GetInformer(ctx, &kurzv1alpha1.Domain{})
	if err != nil {
		return fmt.Errorf("api server: Domain informer: %w", err)
	}
	if err := s.domains.index.Register(domainInformer); err != nil {
		return err
	}
	if _, err := mgr.GetCache().GetInformer(ctx, &corev1.Namespace{}); err != nil {
		return fmt.Errorf("api server: Namespace informer: %w", err)
	}
	return mgr.Add(s)
}

// audiencesFlag is --api-token-audiences: comma-separated and repeatable;
// the first use replaces the default rather than adding to it.
type audiencesFlag struct {
	list *[]string
	set  bool
}

func (f *audiencesFlag) String() string {
	if f.list == nil {
		return ""
	}
	return strings.Join(*f.list, ",")
}

func (f *audiencesFlag) Set(s string) error {
	if !f.set {
		*f.list, f.set = nil, true
	}
	for a := range strings.SplitSeq(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			return fmt.Errorf("empty audience in %q", s)
		}
		*f.list = append(*f.list, a)
	}
	return nil
}
