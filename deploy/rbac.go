package deploy

import (
	"context"
	"fmt"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// WaitForRBAC waits until the API server's authorizer (which learns roles
// and bindings from its informers, a moment after they are stored) allows
// each ServiceAccount bound in objs the first rule of its role. objs are
// the applied objects as maps; those that are not roles or bindings are
// skipped.
func WaitForRBAC(ctx context.Context, kube kubernetes.Interface, objs []map[string]any) error {
	rules := map[string]rbacv1.PolicyRule{} // "Kind/namespace/name" of a role: its first rule
	var bindings []rbacv1.RoleBinding       // ClusterRoleBindings with an empty namespace
	for _, m := range objs {
		kind, _ := m["kind"].(string)
		switch kind {
		case "Role", "ClusterRole":
			var r rbacv1.ClusterRole // same fields as a Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &r); err != nil {
				return err
			}
			if len(r.Rules) > 0 {
				rules[kind+"/"+r.Namespace+"/"+r.Name] = r.Rules[0]
			}
		case "RoleBinding", "ClusterRoleBinding":
			var b rbacv1.RoleBinding // same fields as a ClusterRoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &b); err != nil {
				return err
			}
			bindings = append(bindings, b)
		}
	}
	for _, b := range bindings {
		roleNS := b.Namespace
		if b.RoleRef.Kind == "ClusterRole" {
			roleNS = ""
		}
		rule, ok := rules[b.RoleRef.Kind+"/"+roleNS+"/"+b.RoleRef.Name]
		if !ok || len(rule.Verbs) == 0 || len(rule.Resources) == 0 {
			continue // a role from elsewhere (system:node-bootstrapper)
		}
		res, sub, _ := strings.Cut(rule.Resources[0], "/")
		attrs := &authorizationv1.ResourceAttributes{Namespace: b.Namespace, Verb: rule.Verbs[0], Resource: res, Subresource: sub}
		if len(rule.APIGroups) > 0 {
			attrs.Group = rule.APIGroups[0]
		}
		if len(rule.ResourceNames) > 0 {
			attrs.Name = rule.ResourceNames[0]
		}
		for _, s := range b.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind {
				continue
			}
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:               "system:serviceaccount:" + s.Namespace + ":" + s.Name,
				Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + s.Namespace, "system:authenticated"},
				ResourceAttributes: attrs,
			}}
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				r, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
				return err == nil && r.Status.Allowed, nil
			})
			if err != nil {
				return fmt.Errorf("binding %s/%s: %s is still not allowed to %s %s: %w", b.Namespace, b.Name, sar.Spec.User, attrs.Verb, rule.Resources[0], err)
			}
		}
	}
	return nil
}
