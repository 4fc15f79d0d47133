package devenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// binaries are the control plane executables kurz dev runs.
type binaries struct {
	Dir           string
	Etcd          string
	KubeAPIServer string
	// Kubectl is empty when the directory has none; it is only shown to the
	// user, kurz itself never runs it.
	Kubectl string
}

// findBinaries looks for etcd and kube-apiserver in $KUBEBUILDER_ASSETS when
// set (and only there: an explicit choice must not be overridden silently),
// else in ./bin/k8s, else in k8s/ next to the kurz executable.
func findBinaries() (binaries, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		b, missing := binariesIn(dir)
		if len(missing) > 0 {
			return b, fmt.Errorf("KUBEBUILDER_ASSETS=%s has no %s: run `make control-plane` or point KUBEBUILDER_ASSETS at a directory holding etcd and kube-apiserver", dir, strings.Join(missing, ", "))
		}
		return b, nil
	}
	candidates := []string{filepath.Join("bin", "k8s")}
	if exe, err := os.Executable(); err == nil {
		if exe, err := filepath.EvalSymlinks(exe); err == nil {
			candidates = append(candidates, filepath.Join(filepath.Dir(exe), "k8s"))
		}
	}
	for _, dir := range candidates {
		if b, missing := binariesIn(dir); len(missing) == 0 {
			return b, nil
		}
	}
	return binaries{}, fmt.Errorf("etcd and kube-apiserver not found in %s: run `make control-plane` to build them, or set KUBEBUILDER_ASSETS to a directory holding them", strings.Join(candidates, " or "))
}

// binariesIn returns the binaries in dir and the names of the missing ones.
func binariesIn(dir string) (binaries, []string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	b := binaries{Dir: abs}
	var missing []string
	for name, dst := range map[string]*string{"etcd": &b.Etcd, "kube-apiserver": &b.KubeAPIServer, "kubectl": &b.Kubectl} {
		path := filepath.Join(abs, name)
		if isExecutable(path) {
			*dst = path
		} else if name != "kubectl" {
			missing = append(missing, name)
		}
	}
	if len(missing) == 2 && missing[0] > missing[1] { // map order; keep messages stable
		missing[0], missing[1] = missing[1], missing[0]
	}
	return b, missing
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
