package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// defaultImage is the manager image config/manager/kustomization.yaml sets;
// it is how the manager container is found among the objects.
const defaultImage = "kurz:latest"

// decode reads every object of a multi-document YAML stream, in order.
// Numbers stay integers (unstructured's JSON decoding), as they were written.
func decode(r io.Reader) ([]*unstructured.Unstructured, error) {
	docs := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var objs []*unstructured.Unstructured
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
			continue // an empty document
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			return nil, err
		}
		objs = append(objs, u)
	}
	if len(objs) == 0 {
		return nil, errors.New("no objects")
	}
	return objs, nil
}

// managerDeployment is the one Deployment, and its manager container: the one
// running defaultImage.
func managerDeployment(objs []*unstructured.Unstructured) (*unstructured.Unstructured, map[string]any, error) {
	var deps []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			deps = append(deps, o)
		}
	}
	if len(deps) != 1 {
		return nil, nil, fmt.Errorf("want exactly one Deployment, found %d", len(deps))
	}
	containers, _, _ := unstructured.NestedSlice(deps[0].Object, "spec", "template", "spec", "containers")
	for i, c := range containers {
		if m, ok := c.(map[string]any); ok && m["image"] == defaultImage {
			// NestedSlice copies: hand out the container inside the object.
			return deps[0], deps[0].Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[i].(map[string]any), nil
		}
	}
	return nil, nil, fmt.Errorf("deployment %s has no container with image %s", deps[0].GetName(), defaultImage)
}

// namespaceOf is the namespace config/ installs into: its one Namespace object.
func namespaceOf(objs []*unstructured.Unstructured) (string, error) {
	var names []string
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			names = append(names, o.GetName())
		}
	}
	if len(names) != 1 {
		return "", fmt.Errorf("want exactly one Namespace, found %v", names)
	}
	return names[0], nil
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// writeChart replaces dir with files (relative path → content). It refuses to
// remove a directory that is not a chart, so a wrong -chart cannot wipe one.
func writeChart(dir string, files map[string][]byte) error {
	if _, err := os.Stat(dir); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
			return fmt.Errorf("%s exists and holds no Chart.yaml: not replacing it", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	for name, data := range files {
		if strings.Contains(name, "..") {
			return fmt.Errorf("bad chart file name %q", name)
		}
		if err := writeFile(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	return nil
}
