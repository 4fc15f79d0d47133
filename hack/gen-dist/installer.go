package main

import (
	"bytes"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const installHeader = `# kurz: everything it needs on a cluster, in one file.
#   kubectl apply --server-side -f install.yaml
# Generated from config/default by ` + "`make build-installer IMG=...`" + ` (hack/gen-dist); do not edit.
`

// installer is the objects in kustomize's order, with the manager image set.
func installer(objs []*unstructured.Unstructured, image string) ([]byte, error) {
	objs = deepCopy(objs)
	_, container, err := managerDeployment(objs)
	if err != nil {
		return nil, err
	}
	container["image"] = image
	var out bytes.Buffer
	out.WriteString(installHeader)
	for _, o := range objs {
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(y)
	}
	return out.Bytes(), nil
}

func deepCopy(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out
}
