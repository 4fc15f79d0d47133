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
