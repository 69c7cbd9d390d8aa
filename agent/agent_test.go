package agent

import (
	"errors"
	"strings"
	"testing"
)

func TestCredential(t *testing.T) {
	const uid = "6f1c2a9e-3b7d-4c58-9a0e-2d4f6b8c0e1a"
	cred, hash, err := NewCredential(nil, uid)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cred, uid+".") || len(cred) != len(uid)+1+43 || hash != CredentialHash(cred) || len(hash) != 64 {
		t.Fatalf("credential %q hash %q", cred, hash)
	}
	if cred2, _, _ := NewCredential(nil, uid); cred2 == cred {
		t.Error("two credentials are equal")
	}
	if got, err := HostUID(cred); err != nil || got != uid {
		t.Errorf("HostUID = %q, %v", got, err)
	}
	tests := []struct {
		name  string
		cred  string
		match bool
	}{
		{"same", cred, true},
		{"other secret", uid + ".AAAA", false},
		{"other host", "00000000-0000-0000-0000-000000000000." + strings.SplitN(cred, ".", 2)[1], false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if CredentialMatches(tt.cred, hash) != tt.match {
				t.Errorf("match = %v", !tt.match)
			}
		})
	}
	if !CredentialMatches(cred, strings.ToUpper(hash)) {
		t.Error("an upper-case stored hash does not match")
	}
	if CredentialMatches(cred, "") || CredentialMatches(cred, hash[:10]) {
		t.Error("an empty or short stored hash matched")
	}
	for _, bad := range []string{"", "nouid", ".secret", "uid.", "a/b.secret", "x." + strings.Repeat("s", 200)} {
		if _, err := HostUID(bad); !errors.Is(err, ErrMalformedCredential) {
			t.Errorf("HostUID(%q) = %v", bad, err)
		}
	}
	if _, _, err := NewCredential(nil, "a.b"); err == nil {
		t.Error("a UID with a dot was accepted")
	}
	if _, _, err := NewCredential(strings.NewReader("short"), uid); err == nil {
		t.Error("a failing random source was ignored")
	}
}

func TestValidation(t *testing.T) {
	plan := UpgradePlan{PlanID: "p1", Version: "v1.37.2", URL: "/artifacts/k", SHA256: strings.Repeat("a", 64)}
	tests := []struct {
		name string
		a    Action
		ok   bool
	}{
		{"none", Action{Type: ActionNone}, true},
		{"wipe", Action{Type: ActionWipe, ID: "wipe-3"}, true},
		{"wipe without id", Action{Type: ActionWipe}, false},
		{"upgrade", Action{Type: ActionUpgrade, ID: "p1", Upgrade: &plan}, true},
		{"upgrade id mismatch", Action{Type: ActionUpgrade, ID: "p2", Upgrade: &plan}, false},
		{"upgrade without plan", Action{Type: ActionUpgrade, ID: "p1"}, false},
		{"traversal in version", Action{Type: ActionUpgrade, ID: "p1", Upgrade: &UpgradePlan{PlanID: "p1", Version: "../v1", URL: "u", SHA256: plan.SHA256}}, false},
		{"upper-case digest", Action{Type: ActionUpgrade, ID: "p1", Upgrade: &UpgradePlan{PlanID: "p1", Version: "v1.2.3", URL: "u", SHA256: strings.Repeat("A", 64)}}, false},
		{"unknown type", Action{Type: "reboot"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.a.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate = %v", err)
			}
		})
	}
	r := Report{BootID: "95ec1d05-f628-49bd-965c-d2d0a18047e1", NICs: []NIC{
		{Name: "a", MAC: "AA:BB:CC:00:11:22"}, {Name: "b", MAC: "aa:bb:cc:00:11:22"}, {Name: "c", MAC: "00:00:00:00:00:00"},
		{Name: "ib0", MAC: "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0f:5a:2b"},
	}}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.MACs(), ","); got != "aa:bb:cc:00:11:22" {
		t.Errorf("MACs %q: want one normalized 6-byte MAC", got)
	}
}
