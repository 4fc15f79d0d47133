// Command gen-dist turns the rendered manifests of config/default (the output
// of `kustomize build config/default` on stdin) into the release artefacts:
//
//	-install FILE  one file to `kubectl apply` (make build-installer), with -image; - is stdout
//	-chart DIR     the Helm chart (make helm); its input also holds config/prometheus, whose
//	               ServiceMonitor the chart installs only with metrics.serviceMonitor.enabled
//
// Both come from the same objects, so neither can drift from config/: the
// chart's templates are those objects with a few well-defined fields (the
// namespace, image, replicas, resources, the flags the values own and the
// cookie Secret's name) replaced by template expressions. `make verify`
// regenerates both and fails on any difference.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	install := flag.String("install", "", "write the install manifest to this file (-: stdout)")
	image := flag.String("image", defaultImage, "image of the manager container in the install manifest")
	chart := flag.String("chart", "", "write the Helm chart into this directory (replacing what is there)")
	flag.Parse()
	if *install == "" && *chart == "" {
		fmt.Fprintln(os.Stderr, "gen-dist: give -install FILE, -chart DIR or both; the manifests of `kustomize build config/default` are read from stdin")
		os.Exit(2)
	}
	if err := run(*install, *image, *chart); err != nil {
		fmt.Fprintln(os.Stderr, "gen-dist:", err)
		os.Exit(1)
	}
}

func run(install, image, chart string) error {
	objs, err := decode(os.Stdin)
	if err != nil {
		return fmt.Errorf("read manifests from stdin: %w", err)
	}
	if install != "" {
		out, err := installer(objs, image)
		if err != nil {
			return err
		}
		if install == "-" {
			_, err = os.Stdout.Write(out)
		} else {
			err = writeFile(install, out)
		}
		if err != nil {
			return err
		}
	}
	if chart != "" {
		files, err := helmChart(objs)
		if err != nil {
			return err
		}
		if err := writeChart(chart, files); err != nil {
			return err
		}
	}
	return nil
}
