package devenv

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	// issuer is the service-account token issuer. It must not depend on the
	// port, which may change between starts, or old tokens would be refused.
	issuer = "https://kubernetes.default.svc.cluster.local"
	// TokenLifetime is how long the workspace token is valid; the API
	// server's maximum is raised to match.
	TokenLifetime = 365 * 24 * time.Hour
)

// DefaultKubeAPIServerGOGC is the GOGC kurz dev gives kube-apiserver: 200
// instead of Go's 100. A bulk import's settle is mostly kube-apiserver's
// CPU, 14 % of it its garbage collector; at 200 a 20 000-Link settle took
// an eighth less time and a sixth less of kube-apiserver's CPU, for a
// third more of its RSS (docs/scaling.md, "Where a bulk import's settle goes").
const DefaultKubeAPIServerGOGC = 200

// apiServerSettings are what Options change in kube-apiserver.
type apiServerSettings struct {
	linksWatchCache bool
	gogc            int
}

// startKubeAPIServer runs kube-apiserver against etcdURL, on loopback, with
// the persisted certificates and keys, its watch cache for Links only with
// s.linksWatchCache, and GOGC=s.gogc. It prefers port (the previous one).
func startKubeAPIServer(ctx context.Context, ports *portPicker, path string, p *pki, etcdURL string, s apiServerSettings, prefer int, logPath string) (*child, *rest.Config, error) {
	var lastErr error
	for range startAttempts {
		port, err := ports.prefer(prefer)
		if err != nil {
			return nil, nil, err
		}
		args := []string{
			"--etcd-servers=" + etcdURL,
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			// The endpoint reconciler refuses a loopback address, and nothing
			// in a kurz dev cluster uses the "kubernetes" Service anyway.
			"--endpoint-reconciler-type=none",
			"--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + p.dir, // unused with the files below; keeps it out of /var/run
			"--tls-cert-file=" + p.path("apiserver.crt"),
			"--tls-private-key-file=" + p.path("apiserver.key"),
			"--client-ca-file=" + p.path("ca.crt"),
			"--authorization-mode=RBAC",
			"--service-account-issuer=" + issuer,
			"--service-account-key-file=" + p.path("sa.pub"),
			"--service-account-signing-key-file=" + p.path("sa.key"),
			"--service-account-max-token-expiration=" + TokenLifetime.String(),
			"--service-cluster-ip-range=10.0.0.0/24",
		}
		if !s.linksWatchCache {
			// Lists and watches of Links then go to etcd; see Options.
			args = append(args, "--watch-cache-sizes=links.kurz.dev#0")
		}
		c, err := startChild("kube-apiserver", path, args, []string{"GOGC=" + strconv.Itoa(s.gogc)}, logPath)
		if err != nil {
			return nil, nil, err
		}
		cfg := p.adminConfig("https://127.0.0.1:" + strconv.Itoa(port))
		err = waitReady(ctx, c, 3*time.Minute, func(ctx context.Context) bool { return apiServerReady(ctx, cfg) })
		if err == nil {
			return c, cfg, nil
		}
		_ = c.stop(10 * time.Second)
		if !portRace(c) {
			return nil, nil, err
		}
		lastErr, prefer = err, 0
	}
	return nil, nil, lastErr
}

// adminConfig is a cluster-admin client config for the API server at host.
func (p *pki) adminConfig(host string) *rest.Config {
	return &rest.Config{
		Host: host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   p.caPEM,
			CertData: p.adminCertPEM,
			KeyData:  p.adminKeyPEM,
		},
		// No client-side rate limit, as `kurz manager` has (controller-runtime
		// turns it off and leaves fairness to kube-apiserver's priority and
		// fairness): a limit of 200 requests/s made a bulk import of 100 000
		// Links settle in no less than 500 s, one status write per Link.
		QPS: -1,
	}
}

func apiServerReady(ctx context.Context, cfg *rest.Config) bool {
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return false
	}
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err == nil && string(body) == "ok"
}

// portOf returns the port of a URL such as https://127.0.0.1:6443, or 0.
func portOf(server string) int {
	u, err := url.Parse(server)
	if err != nil {
		return 0
	}
	port, _ := strconv.Atoi(u.Port())
	return port
}
