package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kurz-dev/kurz/internal/consolesession"
	"github.com/kurz-dev/kurz/internal/devenv"
	"github.com/kurz-dev/kurz/internal/freeport"
	"github.com/kurz-dev/kurz/internal/gctune"
	"github.com/kurz-dev/kurz/internal/manager"
)

// devManagerOptions returns the manager options of `kurz dev`: everything on
// loopback, metrics over HTTPS with token checks as in a cluster (the local
// kube-apiserver reviews the tokens; --metrics-secure=false serves plain
// HTTP to anyone on the machine), no health probes, no leader election (one process), and no
// shutdown delay: no endpoints or load balancer have to drop a laptop
// process, so Ctrl-C drains and flushes at once (--shutdown-delay still
// applies when given).
func devManagerOptions() manager.Options {
	o := manager.DefaultOptions()
	o.MetricsBindAddress = "127.0.0.1:8082"
	o.HealthProbeBindAddress = "0"
	o.LeaderElect = false
	o.ShutdownDelay = 0
	o.API.BindAddress = "127.0.0.1:8080"
	o.Redirect.BindAddress = "127.0.0.1:8081"
	// No pod, so no namespace of its own: Ingresses (with --ingress-class)
	// and the Gateway API's objects (--gateway-class, --gateway) go to
	// default.
	o.Controllers.Routes.Namespace = "default"
	// The analytics salt Secret too.
	o.Analytics.SaltNamespace = "default"
	// Webhook receivers on the same machine (a local HTTPS server) are
	// what one tries on a laptop; kurz manager refuses loopback.
	o.Webhooks.AllowLoopback = true
	return o
}

// devOptions are the options of `kurz dev`: the local control plane's, the
// manager's (the same struct as `kurz manager`, with devManagerOptions as
// defaults) and the logger's.
type devOptions struct {
	env     devenv.Options
	manager manager.Options
	zap     zap.Options
	// sessionKey is the console session key kurz dev makes in its data dir
	// on first start, when --console-session-key-file is not given.
	sessionKey string
}

// defaultDevOptions returns the defaults of `kurz dev`.
func defaultDevOptions() devOptions {
	o := devOptions{env: devenv.DefaultOptions(), manager: devManagerOptions()}
	o.env.Out = os.Stdout
	zap.ConsoleEncoder()(&o.zap) // readable on a terminal; --zap-encoder=json still works
	return o
}

// BindFlags registers the manager's and the logger's flags plus
// --data-dir, --api-addr and --redirect-addr.
func (o *devOptions) BindFlags(fs *flag.FlagSet) {
	bindManagerFlags(fs, &o.manager, &o.zap)
	o.env.BindFlags(fs)
	// Aliases of --api-bind-address and --redirect-bind-address: the last
	// one given on the command line wins.
	fs.Var(stringAlias{&o.manager.API.BindAddress}, "api-addr", "Address of the /api/v1 server (alias of --api-bind-address).")
	fs.Var(stringAlias{&o.manager.Redirect.BindAddress}, "redirect-addr", "Address of the redirect server (alias of --redirect-bind-address).")
}

// complete derives what follows from other flags once they are parsed: the
// token is minted for the first API audience, clicks kurz dev could not
// write on its way out wait in the data dir (unless --click-spool is given),
// and a listener asked for on port 0 gets a free port.
func (o *devOptions) complete() error {
	// Routing through the Gateway API needs its CRDs; a laptop has none, so
	// kurz dev brings the ones kurz was built with.
	o.env.GatewayAPI = o.manager.EnableControllers && o.manager.Controllers.Gateway.Enabled()
	if len(o.manager.API.TokenAudiences) > 0 {
		o.env.TokenAudience = o.manager.API.TokenAudiences[0]
	}
	// Analytics is on in kurz dev, in its data dir (--analytics=false
	// turns it off; --analytics-store moves it).
	o.manager.Analytics.SetDefaultEnabled(filepath.Join(o.env.DataDir, "analytics.db"))
	o.manager.Analytics.Complete()
	// Console sessions survive a restart of kurz dev: their key is kept in
	// the data dir, made on first start (runDev).
	if o.manager.API.ConsoleSessionKeyFile == "" {
		o.sessionKey = filepath.Join(o.env.DataDir, devSessionKeyFile)
		o.manager.API.ConsoleSessionKeyFile = o.sessionKey
	}
	if o.manager.Redirect.Clicks.Spool == "" {
		o.manager.Redirect.Clicks.Spool = filepath.Join(o.env.DataDir, "clicks.spool")
	}
	// Port 0 (any free port) is picked here, so that the banner and its
	// commands show the port the server listens on.
	for _, a := range []*string{&o.manager.API.BindAddress, &o.manager.Redirect.BindAddress,
		&o.manager.MetricsBindAddress, &o.manager.HealthProbeBindAddress, &o.manager.PprofBindAddress} {
		if err := pickFreePort(a); err != nil {
			return err
		}
	}
	// The manager listens only once the control plane is up: etcd and
	// kube-apiserver must not take its ports meanwhile.
	o.env.ReservedPorts = listenerPorts(o.manager.API.BindAddress, o.manager.Redirect.BindAddress,
		o.manager.MetricsBindAddress, o.manager.HealthProbeBindAddress, o.manager.PprofBindAddress)
	return nil
}

// pickFreePort replaces port 0 in *addr ("host:0") with a port free on
// loopback a moment ago, keeping the host. "0" and "" (the server is off)
// and fixed ports are left as they are.
func pickFreePort(addr *string) error {
	host, port, err := net.SplitHostPort(*addr)
	if err != nil || port != "0" {
		return nil //nolint:nilerr // not host:port: the manager's validation says what is wrong with it
	}
	p, err := freeport.Port()
	if err != nil {
		return err
	}
	*addr = net.JoinHostPort(host, strconv.Itoa(p))
	return nil
}

// devSessionKeyFile is the console session key's file in the data dir.
const devSessionKeyFile = "console-session.key"

// listenerPorts returns the fixed ports of addrs ("host:port"); "0", an
// empty address and port 0 (any free port) have none.
func listenerPorts(addrs ...string) []int {
	var ports []int
	for _, a := range addrs {
		_, p, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		if n, err := strconv.Atoi(p); err == nil && n > 0 {
			ports = append(ports, n)
		}
	}
	return ports
}

// Validate rejects options `kurz dev` cannot run with.
func (o devOptions) Validate() error {
	return errors.Join(o.env.Validate(), o.manager.Validate())
}

// parseDevFlags parses the command line of `kurz dev`.
func parseDevFlags(args []string) (devOptions, error) {
	o := defaultDevOptions()
	fs := flag.NewFlagSet("kurz dev", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := o.complete(); err != nil {
		return o, err
	}
	return o, o.Validate()
}

// runDev is `kurz dev`: a local control plane (internal/devenv) and the
// manager on it, until SIGINT or SIGTERM.
func runDev(args []string, gc *gctune.Quiet) error {
	c, err := parseDevFlags(args)
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&c.zap)))

	// The first signal starts the shutdown (manager.Manager.Run); a second
	// exits at once, and the kernel then kills the children.
	ctx := ctrl.SetupSignalHandler()
	env, err := devenv.Start(ctx, c.env)
	if err != nil {
		if ctx.Err() != nil { // interrupted while starting: not a failure
			fmt.Println("kurz dev: interrupted, stopped")
			return nil
		}
		return err
	}
	var runErr error
	if c.sessionKey != "" {
		runErr = consolesession.WriteKeyFile(c.sessionKey)
	}
	if runErr == nil {
		runErr = runDevManager(ctx, env, c.manager, gc)
	}
	// The manager is done; only now may the API server and etcd go.
	stopErr := env.Stop()
	if stopErr == nil {
		fmt.Println("kurz dev: stopped")
	}
	return errors.Join(runErr, stopErr)
}

func runDevManager(ctx context.Context, env *devenv.Env, o manager.Options, gc *gctune.Quiet) error {
	fmt.Println("kurz dev: starting the manager (controllers, API, redirects)...")
	mgr, err := manager.New(ctx, env.Config(), o)
	if err != nil {
		return err
	}
	api, redirect := "", ""
	var listening []string
	if o.EnableAPI {
		api = o.API.BindAddress
		listening = append(listening, api)
	}
	if o.EnableRedirect {
		redirect = o.Redirect.BindAddress
		listening = append(listening, redirect)
	}
	// Runs once the caches have synced; the servers start concurrently, so
	// wait (briefly) for them before telling the user to curl them.
	banner := bannerRunnable(func(ctx context.Context) error {
		devenv.WaitListening(ctx, 5*time.Second, listening...)
		if ctx.Err() == nil {
			env.PrintBanner(os.Stdout, api, redirect, devenv.MetricsURL(o.MetricsBindAddress, o.MetricsSecure))
		}
		return nil
	})
	if err := mgr.Add(banner); err != nil {
		return err
	}
	// An error from a runnable stops the manager: a dead control plane ends
	// kurz dev with the reason instead of leaving it serving stale answers.
	if err := mgr.Add(bannerRunnable(env.Watch)); err != nil {
		return err
	}
	if err := addGCTuner(mgr, gc); err != nil {
		return err
	}
	return mgr.Run(ctx)
}

// bannerRunnable is a manager runnable that runs without leader election
// (the banner, the control-plane watch).
type bannerRunnable func(context.Context) error

func (f bannerRunnable) Start(ctx context.Context) error { return f(ctx) }
func (bannerRunnable) NeedLeaderElection() bool          { return false }

// stringAlias is a flag.Value writing to another flag's variable.
type stringAlias struct{ p *string }

func (a stringAlias) String() string {
	if a.p == nil {
		return ""
	}
	return *a.p
}

func (a stringAlias) Set(s string) error { *a.p = s; return nil }
