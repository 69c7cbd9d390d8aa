package deploy

import (
	"context"
	"embed"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

//go:embed rbac/console.yaml
var rolesFS embed.FS

// UserRoles are the ClusterRoles for people (anvil-viewer, anvil-operator),
// as rbac/console.yaml has them.
func UserRoles() ([]*unstructured.Unstructured, error) { return objects(rolesFS, "rbac/console.yaml") }

// InstallUserRoles creates or updates the user ClusterRoles (anvil dev,
// tests).
func InstallUserRoles(ctx context.Context, c client.Client) error {
	objs, err := UserRoles()
	if err != nil {
		return err
	}
	return apply(ctx, c, objs)
}
