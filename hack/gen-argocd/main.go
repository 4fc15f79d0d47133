// Command gen-argocd writes kurz's Argo CD health scripts from one source,
// health.lua.tmpl: config/argocd/<group>/<Kind>/health.lua for each kind (the
// layout of Argo CD's own resource customizations) and the argocd-cm
// snippet that embeds them, config/argocd/argocd-cm.yaml. The scripts differ
// only in the kind their messages name. `make manifests` runs it (from the
// repository root) and `make verify` fails when its output is stale.
package main

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

var (
	//go:embed health.lua.tmpl
	healthTemplate string
	//go:embed argocd-cm.yaml.tmpl
	configMapTemplate string
)

// script is one kind's health script.
type script struct {
	Group, Kind, Script string
}

func main() {
	if err := run(filepath.Join("config", "argocd")); err != nil {
		fmt.Fprintln(os.Stderr, "gen-argocd:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	health := template.Must(template.New("health.lua").Parse(healthTemplate))
	var scripts []script
	for _, kind := range []string{"Link", "Domain", "Webhook"} {
		var b strings.Builder
		if err := health.Execute(&b, map[string]string{"Kind": kind}); err != nil {
			return err
		}
		s := script{Group: kurzv1alpha1.GroupVersion.Group, Kind: kind, Script: b.String()}
		path := filepath.Join(dir, s.Group, kind, "health.lua")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(s.Script), 0o644); err != nil {
			return err
		}
		scripts = append(scripts, s)
	}
	cm := template.Must(template.New("argocd-cm.yaml").Funcs(template.FuncMap{"indent": indent}).Parse(configMapTemplate))
	var b strings.Builder
	if err := cm.Execute(&b, scripts); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "argocd-cm.yaml"), []byte(b.String()), 0o644)
}

// indent puts a YAML block scalar's four spaces before every line of s,
// without the final newline (the template adds it).
func indent(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}
