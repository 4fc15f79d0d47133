package restapi

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/clientip"
	"github.com/kurz-dev/kurz/internal/flagbind"
	"github.com/kurz-dev/kurz/internal/initialevents"
)

// Options configure the API server.
type Options struct {
	// BindAddress is where the server listens (--api-bind-address).
	BindAddress string `flag:"api-bind-address" usage:"Address the /api/v1 server listens on."`
	// Listener, when set, is served instead of listening on BindAddress
	// (tests and `kurz dev` use it to learn the port of "127.0.0.1:0").
	Listener net.Listener
	// PublicURL is the scheme://host[:port] clients reach the API at, used in
	// pagination links; empty means the request's own scheme and Host.
	PublicURL string `flag:"api-public-url" usage:"Public base URL of the API (scheme://host[:port]) used in pagination links; empty uses each request's scheme and Host."`
	// RateLimit is the number of requests per minute allowed per caller
	// (ServiceAccount uid, whichever of its tokens it uses); 0 disables the
	// limit.
	RateLimit int `flag:"api-rate-limit" usage:"Requests per minute allowed per ServiceAccount, whichever of its API tokens it uses; 0 disables the limit."`
	// UnauthenticatedRateLimit is the number of requests per minute allowed
	// per client address for tokens not known to be good (each may cost a
	// TokenReview), counted before authentication; 0 disables the limit.
	UnauthenticatedRateLimit int `flag:"api-unauthenticated-rate-limit" usage:"Requests per minute allowed per client address with a token not yet known to be good (checked before the TokenReview); 0 disables the limit."`
	// TrustedProxies are the networks of the proxies in front of the API;
	// from those peers the client is read from X-Forwarded-For.
	TrustedProxies []netip.Prefix
	// TokenAudiences are the audiences an API token must be minted for;
	// TokenReview is asked for them, so a token for kube-apiserver (any
	// pod's default token) is not an API token, nor an API token a
	// kube-apiserver credential.
	TokenAudiences []string
	// AuthCacheTTL is how long token and access decisions are reused.
	AuthCacheTTL time.Duration `flag:"api-auth-cache-ttl" usage:"How long TokenReview and SubjectAccessReview answers are reused."`
	// ConsoleSessionKeyFile holds the key(s) console session cookies are
	// sealed with, one a line (the first seals, all open: rotation); every
	// replica must read the same file. Empty: a random key of this process
	// (sessions then work on this replica only, until it restarts).
	ConsoleSessionKeyFile string `flag:"console-session-key-file" usage:"File of the key(s) sealing the web console's session cookies, one a line of at least 32 characters (the first seals, every one opens: rotation); every replica must read the same (the chart mounts it from a Secret). Empty: a random key of this process, so a console session works on this replica only."`
	// WriteWait bounds how long a write waits for the cache to observe it
	// before answering (read-your-writes).
	WriteWait time.Duration
	// QRCacheSize is how many rendered QR images are kept.
	QRCacheSize int
	// ShutdownTimeout bounds the graceful shutdown.
	ShutdownTimeout time.Duration
	// Analytics answers the analytics endpoints; nil (analytics off): they
	// answer 503. Set by the composition root, not a flag.
	Analytics analytics.Reader
	// InitialLinks gives the link indexes the Link informer's first list
	// while it streams (internal/initialevents); nil: the informer's
	// handler gives them every Link. Set by the composition root.
	InitialLinks *initialevents.Feed[*kurzv1alpha1.Link]
	// Served is the redirect index when this process also serves
	// redirects; nil: it does not. Set by the composition root.
	Served Served
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

// BindFlags registers the API server's flags on fs, with o's values as
// defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	flagbind.Fields(fs, o)
	clientip.BindTrustedProxies(fs, &o.TrustedProxies, "api-trusted-proxies", "Comma-separated CIDRs of the proxies in front of the API (e.g. the ingress); from those peers the client address is taken from X-Forwarded-For (default: none, the TCP peer is the client).")
	fs.Var(&audiencesFlag{list: &o.TokenAudiences}, "api-token-audiences", "Audiences an API token must be minted for (comma-separated, repeatable); TokenReview is asked for them.")
}

// Validate rejects options the API server cannot run with; every message
// names the flag. Setup calls it: nothing is filled in there, so options
// start from DefaultOptions.
func (o Options) Validate() error {
	var errs []error
	if o.Listener == nil && o.BindAddress == "" {
		errs = append(errs, errors.New("--api-bind-address must not be empty"))
	}
	if o.RateLimit < 0 {
		errs = append(errs, errors.New("--api-rate-limit must not be negative"))
	}
	if o.UnauthenticatedRateLimit < 0 {
		errs = append(errs, errors.New("--api-unauthenticated-rate-limit must not be negative"))
	}
	if len(o.TokenAudiences) == 0 {
		// No audience would accept kube-apiserver's own tokens again.
		errs = append(errs, errors.New("--api-token-audiences must name at least one audience"))
	}
	if slices.Contains(o.TokenAudiences, "") {
		errs = append(errs, errors.New("--api-token-audiences: empty audience"))
	}
	if o.PublicURL != "" {
		errs = append(errs, checkPublicURL(o.PublicURL))
	}
	if o.AuthCacheTTL <= 0 {
		errs = append(errs, fmt.Errorf("--api-auth-cache-ttl must be positive, not %s", o.AuthCacheTTL))
	}
	// The rest have no flag: only a caller building Options by hand can get
	// them wrong, so the message names the field.
	if o.WriteWait <= 0 {
		errs = append(errs, fmt.Errorf("restapi.Options.WriteWait must be positive, not %s", o.WriteWait))
	}
	if o.QRCacheSize <= 0 {
		errs = append(errs, fmt.Errorf("restapi.Options.QRCacheSize must be positive, not %d", o.QRCacheSize))
	}
	if o.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("restapi.Options.ShutdownTimeout must be positive, not %s", o.ShutdownTimeout))
	}
	return errors.Join(errs...)
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
