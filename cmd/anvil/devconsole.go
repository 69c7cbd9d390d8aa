//go:build dev

package main

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/deploy"
)

// devConsoleAdmin prepares `make run`'s console: the user roles, and a
// ServiceAccount anvil-admin (namespace default) bound to anvil-operator
// everywhere, whose token signs in. It prints how.
func devConsoleAdmin(ctx context.Context, out io.Writer, cfg consoleConfig, c client.Client) error {
	if cfg.Listen == "" {
		return nil
	}
	if err := deploy.InstallUserRoles(ctx, c); err != nil {
		return fmt.Errorf("console roles: %w", err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "anvil-admin", Namespace: "default"}}
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ServiceAccount default/anvil-admin: %w", err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "anvil-admin-operator"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "anvil-operator"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "anvil-admin", Namespace: "default"}}}
	if err := c.Create(ctx, crb); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ClusterRoleBinding anvil-admin-operator: %w", err)
	}
	fmt.Fprintf(out, "Admin console: http://%s (sign in with the token of: kubectl create token anvil-admin -n default)\n\n", cfg.Listen)
	return nil
}
