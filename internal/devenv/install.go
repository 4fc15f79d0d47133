package devenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kurz-dev/kurz/config"
	"github.com/kurz-dev/kurz/config/thirdparty"
)

// fieldOwner is the server-side apply manager of everything kurz dev installs.
const fieldOwner = "kurz-dev"

// install applies the embedded CRDs, user ClusterRoles and metrics reader
// ClusterRole, and waits until
// the API server serves the custom resources. Server-side apply makes it
// idempotent and upgrades the CRDs when a newer kurz starts on an old DIR.
func install(ctx context.Context, c client.Client, dc discovery.DiscoveryInterface) error {
	crds, err := embeddedCRDs()
	if err != nil {
		return err
	}
	objs := append([]*unstructured.Unstructured(nil), crds...)
	roles, err := decodeYAML(config.UserRoles)
	if err != nil {
		return fmt.Errorf("decode user roles: %w", err)
	}
	objs = append(objs, roles...)
	reader, err := decodeYAML(config.MetricsReaderRole)
	if err != nil {
		return fmt.Errorf("decode metrics reader role: %w", err)
	}
	objs = append(objs, reader...)
	for _, u := range objs {
		if err := apply(ctx, c, u); err != nil {
			return err
		}
	}
	return waitCRDsServed(ctx, c, dc, crds)
}

func apply(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// embeddedCRDs decodes config.CRDs.
func embeddedCRDs() ([]*unstructured.Unstructured, error) { return crdsIn(config.CRDs) }

// crdsIn decodes every file of fsys.
func crdsIn(fsys fs.FS) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		objs, err := decodeYAML(data)
		if err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		out = append(out, objs...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read embedded CRDs: %w", err)
	}
	if len(out) == 0 {
		return nil, errors.New("no CRDs embedded in the binary")
	}
	return out, nil
}

// gatewayCRD is the CRD whose presence means the Gateway API is installed.
const gatewayCRD = "gateways.gateway.networking.k8s.io"

// installGatewayAPI applies the Gateway API's standard-channel CRDs that
// kurz was built with (config/thirdparty, make gateway-api-crds) when the control
// plane has no Gateway CRD, and waits until they are served. CRDs already
// there, of whatever version or channel, are left alone.
func installGatewayAPI(ctx context.Context, c client.Client, dc discovery.DiscoveryInterface) (bool, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	switch err := c.Get(ctx, client.ObjectKey{Name: gatewayCRD}, &crd); {
	case err == nil:
		return false, nil
	case !apierrors.IsNotFound(err):
		return false, fmt.Errorf("look up CRD %s: %w", gatewayCRD, err)
	}
	objs, err := crdsIn(thirdparty.GatewayAPI)
	if err != nil {
		return false, fmt.Errorf("read the embedded Gateway API CRDs: %w", err)
	}
	for _, u := range objs {
		if err := apply(ctx, c, u); err != nil {
			return false, err
		}
	}
	return true, waitCRDsServed(ctx, c, dc, objs)
}

// decodeYAML splits a multi-document YAML stream into objects.
func decodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// waitCRDsServed waits until every CRD is Established and its resources
// appear in discovery, which is what the manager's RESTMapper reads.
func waitCRDsServed(ctx context.Context, c client.Client, dc discovery.DiscoveryInterface, crds []*unstructured.Unstructured) error {
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, u := range crds {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: u.GetName()}, &crd); err != nil {
				lastErr = err
				return false, nil
			}
			if !established(&crd) {
				lastErr = fmt.Errorf("CRD %s is not established yet", crd.Name)
				return false, nil
			}
			for _, v := range crd.Spec.Versions {
				if !v.Served {
					continue
				}
				list, err := dc.ServerResourcesForGroupVersion(crd.Spec.Group + "/" + v.Name)
				if err != nil {
					lastErr = err
					return false, nil
				}
				found := false
				for _, r := range list.APIResources {
					found = found || r.Name == crd.Spec.Names.Plural
				}
				if !found {
					lastErr = fmt.Errorf("%s/%s is not in discovery yet", crd.Spec.Names.Plural, v.Name)
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil && lastErr != nil && ctx.Err() == nil {
		return fmt.Errorf("wait for the CRDs to be served: %w (last: %v)", err, lastErr)
	}
	if err != nil {
		return fmt.Errorf("wait for the CRDs to be served: %w", err)
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
