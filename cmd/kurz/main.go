package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kurz-dev/kurz/internal/gctune"
	"github.com/kurz-dev/kurz/internal/manager"
	"github.com/kurz-dev/kurz/internal/version"
)

const usage = `kurz: a Kubernetes-native link shortener.

Usage:
  kurz manager [flags]   run the controllers, API and redirect servers against a cluster
  kurz dev [flags]       start a local control plane and run everything on it
  kurz import [flags] F  read links from a CSV or another shortener's export into
                         Link manifests (-o yaml) or through the API (--api)
  kurz version           print the version, commit, Go version and platform
  kurz <command> -h      flags of a command
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "manager":
		err = runManager(args, tuneGC())
	case "dev":
		err = runDev(args, tuneGC())
	case "import":
		err = runImport(args)
	case "version", "--version":
		fmt.Println(version.Get())
		return
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "kurz: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kurz %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// bindManagerFlags registers the manager's and the logger's flags: every
// flag of `kurz manager`, and all but the local control plane's of `kurz
// dev`.
func bindManagerFlags(fs *flag.FlagSet, o *manager.Options, zo *zap.Options) {
	o.BindFlags(fs)
	zo.BindFlags(fs)
}

func runManager(args []string, gc *gctune.Quiet) error {
	o := manager.DefaultOptions()
	zo := zap.Options{}
	fs := flag.NewFlagSet("kurz manager", flag.ContinueOnError)
	bindManagerFlags(fs, &o, &zo)
	if err := fs.Parse(args); err != nil {
		return err
	}
	// Bad flags are reported before anything else (finding the cluster).
	if err := o.Validate(); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zo)))
	if container, soft := memoryLimit(); soft > 0 {
		ctrl.Log.WithName("setup").Info("Go memory limit set below the container's (GOMEMLIMIT overrides)",
			"containerLimit", container, "goMemoryLimit", soft)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("find the cluster: %w", err)
	}
	// The first SIGINT or SIGTERM starts the shutdown: not ready, serve for
	// --shutdown-delay, drain, flush (manager.Manager.Run). A second one
	// exits at once (controller-runtime's handler).
	ctx := ctrl.SetupSignalHandler()
	m, err := manager.New(ctx, cfg, o)
	if err != nil {
		return err
	}
	if err := addGCTuner(m, gc); err != nil {
		return err
	}
	return m.Run(ctx)
}
