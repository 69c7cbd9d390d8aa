package statusapply

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func TestCASPatch(t *testing.T) {
	host := func(mut func(*metalv1.Host)) *metalv1.Host {
		h := &metalv1.Host{
			ObjectMeta: metav1.ObjectMeta{Name: "h", UID: "u1"},
			Spec:       metalv1.HostSpec{BootMACs: []string{"52:54:00:00:00:01"}},
			Status:     metalv1.HostStatus{State: metalv1.HostAvailable, ErrorCount: 2},
		}
		if mut != nil {
			mut(h)
		}
		return h
	}
	cred := &metalv1.BootCredentialStatus{Hash: "abc"}
	// Not the writer's: a change of leases is left out.
	members := []string{"state", "errorCount", "bootCredential"}
	for _, tc := range []struct {
		name          string
		before, after *metalv1.Host
		guards        []string
		want          string // "" for no patch
	}{
		{"unchanged", host(nil), host(nil), nil, ""},
		{"only another writer's member changes", host(nil), host(func(h *metalv1.Host) { h.Status.Leases = []metalv1.DHCPLease{{MAC: "m"}} }), nil, ""},
		{"another writer's member is left out", host(nil), host(func(h *metalv1.Host) {
			h.Status.State = metalv1.HostClaimed
			h.Status.Leases = []metalv1.DHCPLease{{MAC: "m"}}
		}), nil, `[{"op":"test","path":"/status/state","value":"Available"},{"op":"add","path":"/status/state","value":"Claimed"}]`},
		{"a field changes", host(nil), host(func(h *metalv1.Host) { h.Status.State = metalv1.HostClaimed }), nil,
			`[{"op":"test","path":"/status/state","value":"Available"},{"op":"add","path":"/status/state","value":"Claimed"}]`},
		{"a field appears, tested for null", host(nil), host(func(h *metalv1.Host) { h.Status.BootCredential = cred }), nil,
			`[{"op":"test","path":"/status/bootCredential","value":null},{"op":"add","path":"/status/bootCredential","value":{"hash":"abc","issuedAt":null,"expiresAt":null}}]`},
		{"a field goes", host(nil), host(func(h *metalv1.Host) { h.Status.ErrorCount = 0 }), nil,
			`[{"op":"test","path":"/status/errorCount","value":2},{"op":"remove","path":"/status/errorCount"}]`},
		{"two fields, in key order", host(nil), host(func(h *metalv1.Host) { h.Status.State, h.Status.ErrorCount = metalv1.HostClaimed, 3 }), nil,
			`[{"op":"test","path":"/status/errorCount","value":2},{"op":"add","path":"/status/errorCount","value":3},{"op":"test","path":"/status/state","value":"Available"},{"op":"add","path":"/status/state","value":"Claimed"}]`},
		{"no status yet", host(func(h *metalv1.Host) { h.Status = metalv1.HostStatus{} }), host(func(h *metalv1.Host) { h.Status = metalv1.HostStatus{ErrorCount: 1} }), nil,
			`[{"op":"test","path":"/status","value":null},{"op":"add","path":"/status","value":{"errorCount":1}}]`},
		{"guards, one missing", host(nil), host(func(h *metalv1.Host) { h.Status.ErrorCount = 3 }), []string{"/metadata/uid", "/spec/bootMACs", "/metadata/labels/rack"},
			`[{"op":"test","path":"/metadata/uid","value":"u1"},{"op":"test","path":"/spec/bootMACs","value":["52:54:00:00:00:01"]},{"op":"test","path":"/metadata/labels/rack","value":null},{"op":"test","path":"/status/errorCount","value":2},{"op":"add","path":"/status/errorCount","value":3}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok, err := CASPatch(tc.before, tc.after, members, tc.guards...)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (tc.want != "") {
				t.Fatalf("ok = %v, want a patch: %v", ok, tc.want != "")
			}
			if !ok {
				return
			}
			if p.Type() != types.JSONPatchType {
				t.Fatalf("patch type %s", p.Type())
			}
			b, err := p.Data(tc.after)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("patch\n%s\nwant\n%s", b, tc.want)
			}
		})
	}
	if _, _, err := CASPatch(host(nil), host(func(h *metalv1.Host) { h.Status.ErrorCount = 3 }), members, "metadata/uid"); err == nil {
		t.Fatal("a guard that is not a JSON pointer was accepted")
	}
}

// CASPatchOf over a spec member and the annotations: another writer's
// annotation is left alone, a key that appears is tested for null, and a
// part that did not exist is tested for null as a whole.
func TestCASPatchOf(t *testing.T) {
	before := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Name: "h", UID: "u1", Annotations: map[string]string{"other": "x", "a/b": "1"}},
		Spec: metalv1.HostSpec{Online: true, BootRequest: &metalv1.BootRequest{ID: "p1", Purpose: metalv1.BootPurposeProvision}}}
	after := before.DeepCopy()
	after.Spec.BootRequest = &metalv1.BootRequest{ID: "j1", Purpose: metalv1.BootPurposeRejoin}
	after.Annotations["a/b"] = "2"
	after.Annotations["new"] = "y"
	after.Labels = map[string]string{"l": "v"}
	p, ok, err := CASPatchOf(before, after, []Part{{Path: "/spec", Members: []string{"bootRequest", "online"}}, {Path: "/metadata/annotations"}, {Path: "/metadata/labels"}}, "/metadata/uid")
	if err != nil || !ok {
		t.Fatalf("CASPatchOf: ok %t, %v", ok, err)
	}
	b, err := p.Data(after)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"op":"test","path":"/metadata/uid","value":"u1"},` +
		`{"op":"test","path":"/spec/bootRequest","value":{"id":"p1","purpose":"Provision"}},{"op":"add","path":"/spec/bootRequest","value":{"id":"j1","purpose":"Rejoin"}},` +
		`{"op":"test","path":"/metadata/annotations/a~1b","value":"1"},{"op":"add","path":"/metadata/annotations/a~1b","value":"2"},` +
		`{"op":"test","path":"/metadata/annotations/new","value":null},{"op":"add","path":"/metadata/annotations/new","value":"y"},` +
		`{"op":"test","path":"/metadata/labels","value":null},{"op":"add","path":"/metadata/labels","value":{"l":"v"}}]`
	if string(b) != want {
		t.Fatalf("patch\n%s\nwant\n%s", b, want)
	}
	if _, ok, _ := CASPatchOf(before, before.DeepCopy(), []Part{{Path: "/spec"}, {Path: "/metadata/annotations"}}); ok {
		t.Fatal("a patch for an unchanged object")
	}
}
