package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/kurz-dev/kurz/internal/importer"
	"github.com/kurz-dev/kurz/internal/importer/bulk"
	"github.com/kurz-dev/kurz/internal/importer/manifest"
)

const importUsage = `Usage: kurz import [flags] FILE   (FILE - reads stdin)

Reads links from kurz's CSV or another shortener's export and either writes
Link manifests (-o yaml) or creates them through the API (--api). What
cannot carry over is listed at the end. See docs/import.md.

Formats (--format, default auto):
%s
Examples:
  kurz import -o yaml --namespace marketing --out-dir links/ links.csv
  kurz import --api https://kurz.example.com --token-file token shlink.json

Flags:
`

// importOptions are the options of `kurz import`: how the source is read,
// where manifests go, how the API is used, and which of the two.
type importOptions struct {
	source   importer.Options
	manifest manifest.Options
	api      bulk.Options
	// output is -o: "yaml" writes manifests.
	output string
}

func defaultImportOptions() importOptions {
	return importOptions{source: importer.DefaultOptions(), manifest: manifest.DefaultOptions(), api: bulk.DefaultOptions()}
}

// BindFlags registers every flag of `kurz import`.
func (o *importOptions) BindFlags(fs *flag.FlagSet) {
	o.source.BindFlags(fs)
	o.manifest.BindFlags(fs)
	o.api.BindFlags(fs)
	fs.StringVar(&o.output, "o", o.output, "Output: yaml writes Link manifests (to stdout, --out-file or --out-dir) instead of using --api.")
	fs.Var(stringAlias{&o.output}, "output", "Alias of -o.")
}

// Validate checks every flag and that they say one thing: manifests or the
// API.
func (o importOptions) Validate() error {
	errs := []error{o.source.Validate(), o.manifest.Validate(), o.api.Validate()}
	switch {
	case o.output != "" && o.output != "yaml":
		errs = append(errs, fmt.Errorf("-o %q: only yaml is written", o.output))
	case o.output == "yaml" && o.api.API != "":
		errs = append(errs, errors.New("-o yaml and --api: choose one (manifests, or links created through the API)"))
	case o.output == "" && o.api.API == "":
		errs = append(errs, errors.New("say where the links go: -o yaml (manifests) or --api URL --token-file FILE"))
	case o.output == "yaml" && o.api.Set():
		errs = append(errs, errors.New("--token-file, --batch-size, --concurrency and --request-timeout go with --api, not -o yaml"))
	case o.api.API != "" && o.manifest.Set():
		errs = append(errs, errors.New("--namespace, --out-file and --out-dir go with -o yaml (through the API, the token's namespace is the workspace)"))
	}
	return errors.Join(errs...)
}

// parseImportFlags reads the flags and the one source argument.
func parseImportFlags(args []string, stderr io.Writer) (importOptions, string, error) {
	o := defaultImportOptions()
	fs := flag.NewFlagSet("kurz import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, importUsage, importer.FormatHelp())
		fs.PrintDefaults()
	}
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, "", err
	}
	if fs.NArg() != 1 {
		return o, "", fmt.Errorf("give one source file (or - for stdin), got %d arguments", fs.NArg())
	}
	return o, fs.Arg(0), o.Validate()
}

// runImport is `kurz import`. SIGINT or SIGTERM stop it between batches;
// the report still says what was done.
func runImport(args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return importLinks(ctx, args, os.Stdin, os.Stdout, os.Stderr, term.IsTerminal(int(os.Stderr.Fd())))
}

// importLinks reads the source and writes or creates its links; reports go
// to stderr (stdout holds manifests).
func importLinks(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, terminal bool) error {
	o, path, err := parseImportFlags(args, stderr)
	if err != nil {
		return err
	}
	var data []byte
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return err
	}
	r, err := importer.Parse(data, o.source)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "Read %d links from %s (%s).\n", len(r.Links), path, r.Format)
	if len(r.Invalid) > 0 && !o.source.SkipInvalid {
		r.WriteInvalid(stderr)
		return fmt.Errorf("%d invalid records, nothing written: fix them, or pass --skip-invalid to import the %d valid links", len(r.Invalid), len(r.Links))
	}

	var failed error
	switch {
	case len(r.Links) == 0:
		fmt.Fprintln(stderr, "No links to import.")
	case o.output == "yaml":
		n, err := manifest.Write(ctx, r.Links, o.manifest, stdout)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Wrote %d Link manifests%s.\n", n, where(o.manifest))
	default:
		s, err := bulk.Create(ctx, r.Links, o.api, bulk.Progress{W: stderr, Terminal: terminal})
		if s == nil {
			return err
		}
		s.WriteReport(stderr)
		failed = err
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			failed = errors.New("interrupted")
		}
		if failed == nil && len(s.Failed) > 0 {
			failed = fmt.Errorf("the API refused %d links (listed above)", len(s.Failed))
		}
	}
	r.WriteReport(stderr)
	return failed
}

// where says where manifests went.
func where(o manifest.Options) string {
	switch {
	case o.Dir != "":
		return " to " + o.Dir
	case o.File != "":
		return " to " + o.File
	}
	return ""
}
