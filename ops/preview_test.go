package ops

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func TestDecide(t *testing.T) {
	zero := strings.Repeat("0", 64)
	class := &metalv1.MachineClass{ObjectMeta: metav1.ObjectMeta{Name: "lab"}, Spec: metalv1.MachineClassSpec{Kubelets: []metalv1.KubeletArtifact{
		{Version: "v1.37.2", Artifact: metalv1.Artifact{SHA256: zero}}, {Version: "v1.36.3", Artifact: metalv1.Artifact{SHA256: zero}},
		{Version: "v1.38.0", Artifact: metalv1.Artifact{SHA256: zero}}}}}
	running := func(change func(*metalv1.Machine)) *metalv1.Machine {
		m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "ns"},
			Spec:   metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "lab"}, Version: "v1.36.3"},
			Status: metalv1.MachineStatus{Phase: metalv1.MachineRunning, Version: "v1.36.3", InstalledClass: "lab"}}
		if change != nil {
			change(m)
		}
		return m
	}
	set := func(version string, paused bool) *metalv1.MachineSet {
		return &metalv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "ms1"}, Spec: metalv1.MachineSetSpec{Paused: paused,
			Template: metalv1.MachineTemplate{Spec: metalv1.MachineSpec{Version: version}}}}
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name   string
		in     previewInput
		mode   UpgradeMode
		skewOK bool
		why    string // in Why
		skew   string // in Skew
	}{
		{"in place", previewInput{m: running(nil), class: class}, ModeInPlace, true, "only spec.version changes",
			"v1.36.3 -> v1.37.2: one minor up; within the API server v1.37.2's skew; MachineClass lab has its kubelet (sha256)"},
		{"already asks", previewInput{m: running(func(m *metalv1.Machine) { m.Spec.Version = "v1.37.2" }), class: class}, ModeNoChange, true, "spec.version is already v1.37.2", ""},
		{"failed upgrade asks already", previewInput{m: running(func(m *metalv1.Machine) {
			m.Spec.Version = "v1.37.2"
			m.Status.Upgrade = &metalv1.UpgradeStatus{Version: "v1.37.2", State: metalv1.UpgradeFailed}
		}), class: class}, ModeNoChange, true, "anvil machines retry-upgrade m1", ""},
		{"being deleted", previewInput{m: running(func(m *metalv1.Machine) { m.DeletionTimestamp = &now }), class: class}, ModeRefused, true, "being deleted", ""},
		{"failed machine", previewInput{m: running(func(m *metalv1.Machine) {
			m.Status.Phase, m.Status.FailureReason = metalv1.MachineFailed, "BootTimeout"
		}), class: class}, ModeRefused, true, "has failed (BootTimeout)", ""},
		{"skips a minor", previewInput{m: running(nil), class: class, target: "v1.38.0", apiVersion: "v1.38.0"}, ModeRefused, false, "the skew check fails", "skips minor versions"},
		{"newer than the API server", previewInput{m: running(func(m *metalv1.Machine) { m.Status.Version, m.Spec.Version = "v1.37.2", "v1.37.2" }),
			class: class, target: "v1.38.0"}, ModeRefused, false, "", "newer than the API server"},
		{"downgrade", previewInput{m: running(func(m *metalv1.Machine) { m.Status.Version, m.Spec.Version = "v1.37.2", "v1.37.2" }),
			class: class, target: "v1.36.3"}, ModeRefused, false, "", "set spec.allowDowngrade"},
		{"no kubelet in class", previewInput{m: running(nil), class: class, target: "v1.37.9"}, ModeRefused, false, "",
			"MachineClass lab has no kubelet v1.37.9 with a sha256 (it lists v1.36.3, v1.37.2, v1.38.0)"},
		{"class not found", previewInput{m: running(nil)}, ModeRefused, false, "", "MachineClass lab not found"},
		{"class unreadable", previewInput{m: running(nil), classErr: errors.New("forbidden")}, ModeInPlace, true, "", "could not be read (forbidden)"},
		{"no API version", previewInput{m: running(nil), class: class, apiVersion: "-"}, ModeInPlace, true, "", "the API server's version is unknown"},
		{"set not paused", previewInput{m: running(nil), class: class, set: set("v1.36.3", false)}, ModeRefused, true, "belongs to MachineSet ms1", ""},
		{"set paused", previewInput{m: running(nil), class: class, set: set("v1.36.3", true)}, ModeInPlace, true, "", ""},
		{"via a paused set", previewInput{m: running(nil), class: class, set: set("v1.36.3", true), viaSet: true}, ModeWaiting, true, "spec.paused", ""},
		{"via a set", previewInput{m: running(nil), class: class, set: set("v1.36.3", false), viaSet: true}, ModeInPlace, true, "", ""},
		{"not running yet", previewInput{m: running(func(m *metalv1.Machine) { m.Status.Phase, m.Status.Version = metalv1.MachineProvisioning, "" }), class: class},
			ModeWaiting, true, "is Provisioning, not Running", "no kubelet runs yet"},
		{"replace annotation", previewInput{m: running(func(m *metalv1.Machine) { m.Annotations = map[string]string{metalv1.AnnotationReplace: "now"} }), class: class},
			ModeReplacement, true, metalv1.AnnotationReplace, ""},
		{"being replaced", previewInput{m: running(func(m *metalv1.Machine) {
			m.Status.Replacement = &metalv1.MachineReplacement{Reason: metalv1.ReplaceRequested, Message: "asked"}
		}), class: class}, ModeReplacement, true, "being replaced", ""},
		{"class changed", previewInput{m: running(func(m *metalv1.Machine) { m.Status.InstalledClass = "old" }), class: class},
			ModeReplacement, true, "spec.machineClassRef changed from old to lab", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in.target == "" {
				tc.in.target = "v1.37.2"
			}
			switch tc.in.apiVersion {
			case "":
				tc.in.apiVersion = "v1.37.2"
			case "-":
				tc.in.apiVersion = ""
			}
			p := decide(tc.in)
			if p.Mode != tc.mode || p.SkewOK != tc.skewOK || !strings.Contains(p.Why, tc.why) || !strings.Contains(p.Skew, tc.skew) {
				t.Fatalf("decide = %+v\nwant mode %s, skewOK %t, why with %q, skew with %q", p, tc.mode, tc.skewOK, tc.why, tc.skew)
			}
			if p.Machine != "m1" || p.Namespace != "ns" || p.Target != tc.in.target || p.Running != tc.in.m.Status.Version {
				t.Fatalf("identity fields %+v", p)
			}
		})
	}
}

func TestValidVersion(t *testing.T) {
	for v, want := range map[string]string{
		"v1.37.2": "", "": "version is required", "1.37.2": `invalid version "1.37.2": want a kubelet version like v1.37.2 (did you mean v1.37.2?)`,
		"v1.37": `invalid version "v1.37": want a kubelet version like v1.37.2`,
	} {
		err := ValidVersion(v)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("ValidVersion(%q) = %v, want %q", v, err, want)
		}
	}
}
