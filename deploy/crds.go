// Package deploy carries Anvil's install manifests. The CRDs are embedded so
// `anvil dev` and the tests install exactly what is committed here.
package deploy

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

//go:embed crds/*.yaml
var crdFS embed.FS

// CRDs returns the CustomResourceDefinitions Anvil serves.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(crdFS, "crds/*.yaml")
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, n := range names {
		b, err := crdFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// InstallCRDs applies the CRDs with server-side apply and waits until the API
// server serves them. c must have apiextensions/v1 in its scheme.
func InstallCRDs(ctx context.Context, c client.Client) error {
	crds, err := CRDs()
	if err != nil {
		return err
	}
	objs, err := objects(crdFS, "crds/*.yaml")
	if err != nil {
		return err
	}
	if err := apply(ctx, c, objs); err != nil {
		return err
	}
	names := make([]string, 0, len(crds))
	for _, crd := range crds {
		names = append(names, crd.Name)
	}
	return WaitEstablished(ctx, c, names...)
}

// WaitEstablished waits until the API server serves each named CRD
// (condition Established), at most 30 s each.
func WaitEstablished(ctx context.Context, c client.Client, names ...string) error {
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
				return false, nil
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", name, err)
		}
	}
	return nil
}
