package machine

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilversion "k8s.io/apimachinery/pkg/util/version"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func TestPlanID(t *testing.T) {
	const uid = types.UID("0123abcd-ef45-6789-abcd-ef0123456789")
	m := func(version string) *metalv1.Machine {
		return &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{UID: uid}, Spec: metalv1.MachineSpec{Version: version}}
	}
	for _, tc := range []struct {
		name string
		m    *metalv1.Machine
		prev *metalv1.UpgradeStatus
		want string
	}{
		{"first plan", m("v1.32.1"), nil, "0123abcd-v1.32.1-1"},
		{"retry of the same version counts up", m("v1.32.1"), &metalv1.UpgradeStatus{Version: "v1.32.1", PlanID: "0123abcd-v1.32.1-1"}, "0123abcd-v1.32.1-2"},
		{"ninth retry goes to two digits", m("v1.32.1"), &metalv1.UpgradeStatus{Version: "v1.32.1", PlanID: "0123abcd-v1.32.1-9"}, "0123abcd-v1.32.1-10"},
		{"two digits keep counting", m("v1.32.1"), &metalv1.UpgradeStatus{Version: "v1.32.1", PlanID: "0123abcd-v1.32.1-10"}, "0123abcd-v1.32.1-11"},
		{"a new version starts at 1", m("v1.33.0"), &metalv1.UpgradeStatus{Version: "v1.32.1", PlanID: "0123abcd-v1.32.1-4"}, "0123abcd-v1.33.0-1"},
		{"a pre-release version with dashes", m("v1.33.0-rc.1"), &metalv1.UpgradeStatus{Version: "v1.33.0-rc.1", PlanID: "0123abcd-v1.33.0-rc.1-3"}, "0123abcd-v1.33.0-rc.1-4"},
		{"short UID kept whole", &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{UID: "ab-cd"}, Spec: metalv1.MachineSpec{Version: "v1.32.1"}}, nil, "abcd-v1.32.1-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := planID(tc.m, tc.prev); got != tc.want {
				t.Errorf("planID = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBootID(t *testing.T) {
	const uid = types.UID("0123abcd-ef45-6789-abcd-ef0123456789")
	m := func(replacements int32) *metalv1.Machine {
		return &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: metalv1.MachineStatus{Replacements: replacements}}
	}
	for _, tc := range []struct {
		name    string
		m       *metalv1.Machine
		purpose metalv1.BootPurpose
		attempt int32
		want    string
	}{
		{"first provision", m(0), metalv1.BootPurposeProvision, 1, "0123abcdef45-p1"},
		{"second provision", m(0), metalv1.BootPurposeProvision, 2, "0123abcdef45-p2"},
		{"tenth provision", m(0), metalv1.BootPurposeProvision, 10, "0123abcdef45-p10"},
		{"wipe", m(0), metalv1.BootPurposeWipe, 1, "0123abcdef45-d1"},
		{"first replacement", m(1), metalv1.BootPurposeProvision, 1, "0123abcdef45-r1p1"},
		{"replacement wipe", m(2), metalv1.BootPurposeWipe, 3, "0123abcdef45-r2d3"},
		{"short UID kept whole", &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{UID: "ab-cd"}}, metalv1.BootPurposeProvision, 1, "abcd-p1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bootID(tc.m, tc.purpose, tc.attempt); got != tc.want {
				t.Errorf("bootID = %q, want %q", got, tc.want)
			}
		})
	}
	// No two replacement counts, purposes and attempts share an ID.
	seen := map[string]string{}
	for r := int32(0); r < 15; r++ {
		for a := int32(1); a < 15; a++ {
			for _, p := range []metalv1.BootPurpose{metalv1.BootPurposeProvision, metalv1.BootPurposeWipe} {
				id := bootID(m(r), p, a)
				k := fmt.Sprintf("replacement %d %s attempt %d", r, p, a)
				if prev, ok := seen[id]; ok {
					t.Fatalf("bootID %q for %s and %s", id, prev, k)
				}
				seen[id] = k
			}
		}
	}
}

func TestKubeletSkew(t *testing.T) {
	for _, tc := range []struct {
		name, running, version string
		allowDowngrade         bool
		wantErr                string // substring; "" = allowed
	}{
		{"patch up", "v1.32.1", "v1.32.4", false, ""},
		{"one minor up", "v1.32.1", "v1.33.0", false, ""},
		{"two minors up", "v1.32.1", "v1.34.0", false, "skips minor versions"},
		{"same version", "v1.32.1", "v1.32.1", false, ""},
		{"patch down refused", "v1.32.4", "v1.32.3", false, "set spec.allowDowngrade"},
		{"patch down allowed", "v1.32.4", "v1.32.3", true, ""},
		{"minor down allowed", "v1.33.0", "v1.32.9", true, ""},
		{"major up", "v1.32.1", "v2.0.0", false, "skips minor versions"},
		{"major down allowed still changes major", "v2.0.0", "v1.32.0", true, "skips minor versions"},
		{"running not a version", "1.32", "v1.32.1", false, `the Node reports kubelet "1.32"`},
		{"target not a version", "v1.32.1", "latest", false, `spec.version "latest"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			to, err := kubeletSkew(tc.running, tc.version, tc.allowDowngrade)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr == "" && to.String() != strings.TrimPrefix(tc.version, "v"):
				t.Errorf("parsed %s, want %s", to, tc.version)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestAPISkew(t *testing.T) {
	for _, tc := range []struct {
		name, api, version string
		wantErr            string
	}{
		{"same version", "v1.32.1", "v1.32.1", ""},
		{"newer patch of the API server's minor", "v1.32.1", "v1.32.5", ""},
		{"one minor newer than the API server", "v1.32.1", "v1.33.0", "newer than the API server"},
		{"one minor older", "v1.32.0", "v1.31.9", ""},
		{"three minors older", "v1.32.0", "v1.29.0", ""},
		{"four minors older", "v1.32.0", "v1.28.9", "more than 3 minors older"},
		{"newer major", "v1.32.0", "v2.0.0", "newer than the API server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := apiSkew(utilversion.MustParseSemantic(tc.api), utilversion.MustParseSemantic(tc.version), tc.version)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
