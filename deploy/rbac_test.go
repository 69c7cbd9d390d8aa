package deploy_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/deploy"
	"anvil.dev/anvil/test/envtest"
)

// The accounts whose permissions deploy/rbac/PERMISSIONS.md lists.
var accounts = map[string]string{
	"anvil":     "system:serviceaccount:anvil-system:anvil",
	"anvil-pxe": "system:serviceaccount:anvil-system:anvil-pxe",
}

// An account with no binding of its own: what it may do (discovery,
// self reviews) every service account may, and is not Anvil's to list.
const baselineUser = "system:serviceaccount:rbac-test-other:nobody"

// probeNamespaces: Anvil's own, the tokens', the examples' and an unrelated
// one; "" is the cluster-wide request (all namespaces).
var probeNamespaces = []string{"", "kube-system", "anvil-system", "default", "rbac-test-other"}

var standardVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// Verbs RBAC knows beyond the standard ones, and resources discovery does
// not show but RBAC checks.
var extraVerbs = map[string][]string{
	"roles.rbac.authorization.k8s.io":        {"bind", "escalate"},
	"clusterroles.rbac.authorization.k8s.io": {"bind", "escalate"},
	"serviceaccounts":                        {"impersonate"},
	"users":                                  {"impersonate"},
	"groups":                                 {"impersonate"},
	"uids.authentication.k8s.io":             {"impersonate"},
	"userextras.authentication.k8s.io":       {"impersonate"},
	"signers.certificates.k8s.io":            {"approve", "sign", "attest"},
}

// entry is one row of PERMISSIONS.md.
type entry struct {
	account    string
	namespaces []string // nil: every namespace and cluster-wide
	resource   string   // resource[.group][/subresource]
	verbs      []string
	names      []string // nil: any name
	why        string
	line       int
}

func (e entry) coversNamespace(ns string) bool {
	return e.namespaces == nil || (ns != "" && slices.Contains(e.namespaces, ns))
}

// parsePermissions reads the tables of PERMISSIONS.md: rows of
// | account | namespaces | resource | verbs | names | why |.
func parsePermissions(t *testing.T, path string) []entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []entry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		if len(cells) != 6 || cells[0] == "Account" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		if _, ok := accounts[cells[0]]; !ok {
			t.Fatalf("%s:%d: unknown account %q", path, n, cells[0])
		}
		e := entry{account: cells[0], resource: cells[2], verbs: list(cells[3]), names: list(cells[4]), why: cells[5], line: n}
		if cells[1] != "all" {
			e.namespaces = list(cells[1])
		}
		if len(e.verbs) == 0 || e.resource == "" || len(e.why) < 10 {
			t.Fatalf("%s:%d: each row needs a resource, verbs and its reason", path, n)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s lists no permissions", path)
	}
	return out
}

func list(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && p != "-" {
			out = append(out, p)
		}
	}
	return out
}

// resource is what a SubjectAccessReview asks about.
type resource struct {
	group, resource, subresource string
	namespaced                   bool
}

func (r resource) String() string {
	s := r.resource
	if r.group != "" {
		s += "." + r.group
	}
	if r.subresource != "" {
		s += "/" + r.subresource
	}
	return s
}

// probe is one question: may account do verb on resource (name) in namespace?
type probe struct {
	account   string
	res       resource
	namespace string
	verb      string
	name      string
}

// Every permission the deployed roles give Anvil's service accounts, on any
// resource the API server serves, in Anvil's namespaces, kube-system and an
// unrelated namespace, is listed with its reason in deploy/rbac/PERMISSIONS.md,
// and everything listed there is granted. The test prints the table.
func TestServiceAccountPermissionsAreListed(t *testing.T) {
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	allowed := parsePermissions(t, filepath.Join(root, "deploy", "rbac", "PERMISSIONS.md"))
	env, err := envtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	ctx := context.Background()
	names, mentioned := applyDeploy(ctx, t, env)
	if t.Failed() {
		return
	}

	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 2000, 4000
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resources := servedResources(t, cfg)
	// Resources the roles name that discovery does not show (finalizers,
	// or a typo): probed as well, namespaced like their parent.
	for _, m := range mentioned {
		found, namespaced := false, true
		for _, r := range resources {
			if r.group == m.group && r.resource == m.resource {
				namespaced = r.namespaced
				found = found || r.subresource == m.subresource
			}
		}
		if !found {
			m.namespaced = namespaced
			resources = append(resources, m)
		}
	}
	scopes := slices.Clone(probeNamespaces)
	for _, e := range allowed {
		for _, ns := range e.namespaces {
			if !slices.Contains(scopes, ns) {
				scopes = append(scopes, ns)
			}
		}
	}
	for _, ns := range scopes {
		if ns != "" {
			if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
	}
	var probes []probe
	for _, r := range resources {
		verbs := append(slices.Clone(standardVerbs), extraVerbs[resource{group: r.group, resource: r.resource}.String()]...)
		nss := []string{""}
		if r.namespaced {
			nss = scopes
		}
		for _, ns := range nss {
			for _, v := range verbs {
				for _, n := range append([]string{""}, names[r.String()]...) {
					for a := range accounts {
						probes = append(probes, probe{account: a, res: r, namespace: ns, verb: v, name: n})
					}
					probes = append(probes, probe{account: "", res: r, namespace: ns, verb: v, name: n})
				}
			}
		}
	}
	results := review(ctx, t, kube, probes)
	base := map[probe]bool{}
	for p, ok := range results {
		if p.account == "" && ok {
			base[probe{res: p.res, namespace: p.namespace, verb: p.verb, name: p.name}] = true
		}
	}

	// What each account may do beyond the baseline, as rows of the table.
	type rowKey struct{ account, namespace, res, name string }
	rows := map[rowKey][]string{}
	granted := map[probe]bool{}
	var unlisted []string
	for p, ok := range results {
		if p.account == "" || !ok || base[probe{res: p.res, namespace: p.namespace, verb: p.verb, name: p.name}] {
			continue
		}
		granted[probe{account: p.account, res: resource{group: p.res.group, resource: p.res.resource, subresource: p.res.subresource}, namespace: p.namespace, verb: p.verb, name: p.name}] = true
		k := rowKey{p.account, p.namespace, p.res.String(), p.name}
		rows[k] = append(rows[k], p.verb)
		if !covered(allowed, p) {
			where := p.namespace
			if where == "" {
				where = "cluster-wide"
			}
			name := ""
			if p.name != "" {
				name = " (name " + p.name + ")"
			}
			unlisted = append(unlisted, fmt.Sprintf("%s may %s %s%s in %s", p.account, p.verb, p.res, name, where))
		}
	}
	sort.Strings(unlisted)
	for _, u := range unlisted {
		t.Errorf("%s, which deploy/rbac/PERMISSIONS.md does not list: remove it from its role or list it with its reason", u)
	}
	// A namespace's row repeats the cluster-wide one, and a name's row the
	// any-name one, when the verbs are the same: the table leaves those out.
	same := func(a, b []string) bool {
		return len(a) == len(b) && !slices.ContainsFunc(a, func(v string) bool { return !slices.Contains(b, v) })
	}
	keys := make([]rowKey, 0, len(rows))
	for k, v := range rows {
		if (k.name != "" && same(v, rows[rowKey{k.account, k.namespace, k.res, ""}])) ||
			(k.namespace != "" && same(v, rows[rowKey{k.account, "", k.res, k.name}])) {
			continue
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return fmt.Sprint(a.account, "\x00", a.res, "\x00", a.namespace, "\x00", a.name) < fmt.Sprint(b.account, "\x00", b.res, "\x00", b.namespace, "\x00", b.name)
	})
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-10s %-16s %-56s %-30s %s\n", "ACCOUNT", "NAMESPACE", "RESOURCE", "NAME", "VERBS")
	for _, k := range keys {
		ns := k.namespace
		if ns == "" {
			ns = "(all)"
		}
		name := k.name
		if name == "" {
			name = "*"
		}
		verbs := rows[k]
		sort.Slice(verbs, func(i, j int) bool { return verbOrder(verbs[i]) < verbOrder(verbs[j]) })
		fmt.Fprintf(&table, "%-10s %-16s %-56s %-30s %s\n", k.account, ns, k.res, name, strings.Join(verbs, ","))
	}
	t.Log(table.String())

	// Everything listed is granted: the list stays the truth.
	for _, e := range allowed {
		r := parseResource(e.resource)
		nss := e.namespaces
		if nss == nil {
			nss = []string{""}
		}
		nms := e.names
		if nms == nil {
			nms = []string{""}
		}
		for _, ns := range nss {
			for _, v := range e.verbs {
				for _, n := range nms {
					if !granted[probe{account: e.account, res: r, namespace: ns, verb: v, name: n}] {
						t.Errorf("PERMISSIONS.md:%d lists %s %s %s (namespace %q, name %q), which the roles do not grant (or every account may): drop the row",
							e.line, e.account, v, e.resource, ns, n)
					}
				}
			}
		}
	}
}

func verbOrder(v string) int {
	if i := slices.Index(standardVerbs, v); i >= 0 {
		return i
	}
	return len(standardVerbs)
}

// covered reports whether a row allows the probe.
func covered(allowed []entry, p probe) bool {
	for _, e := range allowed {
		if e.account == p.account && e.resource == p.res.String() && slices.Contains(e.verbs, p.verb) &&
			e.coversNamespace(p.namespace) && (e.names == nil || (p.name != "" && slices.Contains(e.names, p.name))) {
			return true
		}
	}
	return false
}

// parseResource splits resource[.group][/subresource].
func parseResource(s string) resource {
	r := resource{}
	s, r.subresource, _ = strings.Cut(s, "/")
	r.resource, r.group, _ = strings.Cut(s, ".")
	return r
}

// applyDeploy creates what `kubectl apply -k deploy/` would, but the
// workloads (nothing runs pods here); it returns the resourceNames the
// roles mention, by resource, so they are probed too.
func applyDeploy(ctx context.Context, t *testing.T, env *envtest.Env) (map[string][]string, []resource) {
	t.Helper()
	names := map[string][]string{}
	var mentioned []resource
	var applied []map[string]any
	for _, u := range envtest.DeployObjects(t) {
		m := u.Object
		opts := []client.ApplyOption{client.FieldOwner("test"), client.ForceOwnership}
		switch u.GetKind() {
		case "Deployment", "DaemonSet", "Service":
			opts = append(opts, client.DryRunAll)
		case "Role", "ClusterRole":
			var role rbacv1.ClusterRole // same rules as a Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &role); err != nil {
				t.Fatal(err)
			}
			for _, rule := range role.Rules {
				for _, g := range rule.APIGroups {
					for _, res := range rule.Resources {
						sub := ""
						res, sub, _ = strings.Cut(res, "/")
						r := resource{group: g, resource: res, subresource: sub}
						if !slices.Contains(mentioned, r) {
							mentioned = append(mentioned, r)
						}
						key := r.String()
						for _, n := range rule.ResourceNames {
							if !slices.Contains(names[key], n) {
								names[key] = append(names[key], n)
							}
						}
					}
				}
			}
		}
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		applied = append(applied, m)
	}
	kube, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := deploy.WaitForRBAC(ctx, kube, applied); err != nil {
		t.Fatal(err)
	}
	return names, mentioned
}

// servedResources is every resource and subresource of the API server's
// preferred versions, plus those RBAC checks that discovery does not show.
func servedResources(t *testing.T, cfg *rest.Config) []resource {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	seen := map[resource]bool{}
	var out []resource
	add := func(r resource) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, ar := range l.APIResources {
			res, sub, _ := strings.Cut(ar.Name, "/")
			add(resource{group: gv.Group, resource: res, subresource: sub, namespaced: ar.Namespaced})
		}
	}
	// ServerPreferredResources leaves out subresources; the API server's
	// own listing of each group version has them.
	for _, l := range lists {
		full, err := dc.ServerResourcesForGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, ar := range full.APIResources {
			res, sub, _ := strings.Cut(ar.Name, "/")
			add(resource{group: gv.Group, resource: res, subresource: sub, namespaced: ar.Namespaced})
		}
	}
	for _, r := range []resource{
		{resource: "users"}, {resource: "groups"},
		{group: "authentication.k8s.io", resource: "uids"},
		{group: "authentication.k8s.io", resource: "userextras"},
		{group: "certificates.k8s.io", resource: "signers"},
	} {
		add(r)
	}
	return out
}

// review asks the API server about every probe, a few at a time.
func review(ctx context.Context, t *testing.T, kube kubernetes.Interface, probes []probe) map[probe]bool {
	t.Helper()
	out := make(map[probe]bool, len(probes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan probe)
	errs := make(chan error, 1)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				user := baselineUser
				if p.account != "" {
					user = accounts[p.account]
				}
				ns, _, _ := strings.Cut(strings.TrimPrefix(user, "system:serviceaccount:"), ":")
				sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User:   user,
					Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
					ResourceAttributes: &authorizationv1.ResourceAttributes{
						Namespace: p.namespace, Verb: p.verb, Group: p.res.group, Resource: p.res.resource,
						Subresource: p.res.subresource, Name: p.name,
					},
				}}
				res, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				mu.Lock()
				out[p] = res.Status.Allowed
				mu.Unlock()
			}
		}()
	}
	for _, p := range probes {
		work <- p
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatalf("SubjectAccessReview: %v", err)
	default:
	}
	return out
}
