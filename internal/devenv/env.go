package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kurz-dev/kurz/internal/scheme"
)

// stopGrace is how long a child gets to exit after SIGTERM before SIGKILL.
const stopGrace = 30 * time.Second

// Env is a running local control plane. Stop it with Stop.
type Env struct {
	dataDir string // absolute
	shown   string // DataDir as the user gave it, for messages
	out     io.Writer
	// audience is the audience of DIR/token.
	audience string
	// gatewayAPI: install the Gateway API's CRDs when missing.
	gatewayAPI bool
	bins       binaries
	lock       *dirLock
	etcd       *child
	etcdURL    string
	apiSrv     *child
	cfg        *rest.Config
	// Settings of the children, from Options.
	apiServer apiServerSettings
	etcdQuota int64
	ports     *portPicker
}

// Start locks DataDir, starts etcd and kube-apiserver, installs the CRDs and
// roles, sets up the workspace and writes DIR/kubeconfig and DIR/token. On
// error everything started so far is stopped again.
func Start(ctx context.Context, o Options) (_ *Env, err error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	e := &Env{dataDir: abs, shown: o.DataDir, out: o.Out, audience: o.TokenAudience, gatewayAPI: o.GatewayAPI,
		apiServer: apiServerSettings{linksWatchCache: o.LinksWatchCache, gogc: o.KubeAPIServerGOGC}, etcdQuota: o.EtcdQuotaBytes,
		ports: newPortPicker(o.ReservedPorts)}
	if e.bins, err = findBinaries(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	if e.lock, err = lockDir(abs); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()
	if err := e.start(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Env) start(ctx context.Context) error {
	logs := e.path("logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", logs, err)
	}
	p, err := loadOrCreatePKI(e.path("pki"))
	if err != nil {
		return err
	}

	e.progress("starting etcd (data in %s)...", filepath.Join(e.shown, "etcd"))
	t := time.Now()
	e.etcd, e.etcdURL, err = startEtcd(ctx, e.ports, e.bins.Etcd, e.path("etcd"), e.etcdQuota, filepath.Join(logs, "etcd.log"))
	if err != nil {
		return err
	}
	e.progress("etcd ready in %s", since(t))

	e.progress("starting kube-apiserver (watch cache for Links %s, GOGC=%d)...", onOff(e.apiServer.linksWatchCache), e.apiServer.gogc)
	t = time.Now()
	e.apiSrv, e.cfg, err = startKubeAPIServer(ctx, e.ports, e.bins.KubeAPIServer, p, e.etcdURL, e.apiServer,
		previousAPIPort(e.path("kubeconfig")), filepath.Join(logs, "kube-apiserver.log"))
	if err != nil {
		return err
	}
	e.progress("kube-apiserver ready in %s at %s", since(t), e.cfg.Host)

	c, err := client.New(e.Config(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(e.Config())
	if err != nil {
		return fmt.Errorf("create clientset: %w", err)
	}
	e.progress("installing CRDs and roles...")
	t = time.Now()
	if err := install(ctx, c, cs.Discovery()); err != nil {
		return err
	}
	e.progress("CRDs served in %s", since(t))
	if e.gatewayAPI {
		t = time.Now()
		installed, err := installGatewayAPI(ctx, c, cs.Discovery())
		if err != nil {
			return err
		}
		if installed {
			e.progress("Gateway API CRDs (standard channel) installed in %s", since(t))
		}
	}

	if err := setUpWorkspace(ctx, c); err != nil {
		return err
	}
	issued, err := ensureToken(ctx, cs, e.path("token"), e.audience)
	if err != nil {
		return err
	}
	if err := writeKubeconfig(e.path("kubeconfig"), e.cfg); err != nil {
		return err
	}
	verb := "kept"
	if issued {
		verb = "wrote a new"
	}
	e.progress("workspace %q: ServiceAccount %s (%s); %s token in %s", Workspace, ServiceAccount, Role, verb, e.Token())
	return nil
}

// Config returns a cluster-admin client config for the API server.
func (e *Env) Config() *rest.Config { return rest.CopyConfig(e.cfg) }

// EtcdURL is etcd's client URL (loopback, no authentication), for tools
// that write to etcd directly (hack/bench-scale's bulk loader).
func (e *Env) EtcdURL() string { return e.etcdURL }

// Kubeconfig is the path of the admin kubeconfig, as the user gave DataDir.
func (e *Env) Kubeconfig() string { return filepath.Join(e.shown, "kubeconfig") }

// Token is the path of the API token file, as the user gave DataDir.
func (e *Env) Token() string { return filepath.Join(e.shown, "token") }

// PIDs returns the process ids of etcd and kube-apiserver (0 when not
// running), for tools that measure their memory (hack/bench-scale).
func (e *Env) PIDs() (etcd, apiServer int) {
	pid := func(c *child) int {
		if c == nil || c.cmd.Process == nil {
			return 0
		}
		return c.cmd.Process.Pid
	}
	return pid(e.etcd), pid(e.apiSrv)
}

// Watch blocks until ctx is done (nil) or etcd or kube-apiserver exits on
// its own (an error with the end of its log), so that kurz dev stops with a
// reason instead of serving on a dead control plane.
func (e *Env) Watch(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-e.etcd.done:
		return e.etcd.exitError()
	case <-e.apiSrv.done:
		return e.apiSrv.exitError()
	}
}

// Stop stops kube-apiserver, then etcd, and releases the data dir. Stop the
// manager before: it needs the API server to shut down cleanly.
func (e *Env) Stop() error {
	var errs []error
	for _, c := range []*child{e.apiSrv, e.etcd} {
		if c == nil || c.exited() {
			continue
		}
		e.progress("stopping %s...", c.name)
		errs = append(errs, c.stop(stopGrace))
	}
	e.apiSrv, e.etcd = nil, nil
	errs = append(errs, e.lock.unlock())
	return errors.Join(errs...)
}

func (e *Env) path(name string) string { return filepath.Join(e.dataDir, name) }

func (e *Env) progress(format string, args ...any) {
	fmt.Fprintf(e.out, "kurz dev: "+format+"\n", args...)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
