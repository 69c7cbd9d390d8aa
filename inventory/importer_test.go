package inventory

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func TestParseAndValidateRows(t *testing.T) {
	const header = "name,bmc_address,username,password,boot_macs,rack,failure_domain,labels\n"
	existing := []metalv1.Host{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "old"},
		Spec:       metalv1.HostSpec{BootMACs: []string{"52:54:00:00:99:99"}},
	}}
	cases := []struct {
		name      string
		body      string
		wantLines []int    // lines reported bad, in order
		wantText  []string // fragments of the report
	}{
		{"good", "h1,ipmi://10.0.0.1,admin,pw,52:54:00:00:00:01,r1,fd-a,role=worker\n" +
			"h2,redfish+https://10.0.0.2/redfish/v1/Systems/1,admin,pw,52:54:00:00:00:02;52:54:00:00:00:03,r1,fd-a,\n" +
			"h3,manual://rack-4,,,52:54:00:00:00:04,,,\n", nil, nil},
		{"three bad", "h1,ipmi://10.0.0.1,admin,pw,52:54:00:00:00:01,,,\n" +
			"h2,ipmi://10.0.0.2,admin,pw,not-a-mac,,,\n" +
			"h3,idrac://10.0.0.3,admin,pw,52:54:00:00:00:03,,,\n" +
			"h4,ipmi://10.0.0.4,admin,pw,52:54:00:00:00:01,,,\n",
			[]int{3, 4, 5}, []string{"not-a-mac", `scheme "idrac"`, "also on line 2"}},
		{"clash with cluster", "h1,ipmi://10.0.0.1,admin,pw,52:54:00:00:99:99,,,\n", []int{2}, []string{"default/old"}},
		{"missing password", "h1,ipmi://10.0.0.1,admin,,52:54:00:00:00:01,,,\n", []int{2}, []string{"password are required"}},
		{"bad name and label", "H_1,ipmi://10.0.0.1,admin,pw,52:54:00:00:00:01,,,bad key=x\n", []int{2, 2}, []string{"name", "label key"}},
		{"duplicate name", "h1,ipmi://10.0.0.1,a,p,52:54:00:00:00:01,,,\nh1,ipmi://10.0.0.2,a,p,52:54:00:00:00:02,,,\n", []int{3}, []string{"also on line 2"}},
		{"short row", "h1,ipmi://10.0.0.1,admin\n", []int{2}, []string{"3 fields"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := ParseImport(strings.NewReader(header + tc.body))
			if err != nil {
				t.Fatal(err)
			}
			errs := ValidateRows(rows, "default", existing)
			var lines []int
			for _, e := range errs {
				lines = append(lines, e.Line)
			}
			if len(lines) != len(tc.wantLines) {
				t.Fatalf("bad lines = %v, want %v (%v)", lines, tc.wantLines, errs)
			}
			for i := range lines {
				if lines[i] != tc.wantLines[i] {
					t.Fatalf("bad lines = %v, want %v", lines, tc.wantLines)
				}
			}
			report := ""
			if len(errs) > 0 {
				report = errs.Error()
			}
			for _, frag := range tc.wantText {
				if !strings.Contains(report, frag) {
					t.Errorf("report lacks %q:\n%s", frag, report)
				}
			}
			if strings.Contains(report, "pw,") {
				t.Errorf("report echoes a password:\n%s", report)
			}
		})
	}
}

func TestParseYAMLAndUnknownColumn(t *testing.T) {
	rows, err := ParseImport(strings.NewReader(`hosts:
- name: a
  bmcAddress: ipmi://10.0.0.1
  username: admin
  password: pw
  bootMACs: ["52:54:00:00:00:0A"]
  failureDomain: fd-1
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Line != 1 || rows[0].FailureDomain != "fd-1" {
		t.Fatalf("rows = %v", rows)
	}
	if errs := ValidateRows(rows, "default", nil); len(errs) != 0 {
		t.Fatal(errs)
	}
	h := rows[0].host("default")
	if h.Spec.BootMACs[0] != "52:54:00:00:00:0a" || h.Labels[metalv1.LabelFailureDomain] != "fd-1" || h.Spec.BMC.CredentialsName != "a-bmc" {
		t.Fatalf("host = %+v", h)
	}
	if s := rows[0].String(); strings.Contains(s, "pw") {
		t.Fatalf("String() shows the password: %s", s)
	}
	if _, err := ParseImport(strings.NewReader("name,bmc_address,boot_macs,colour\n")); err == nil || !strings.Contains(err.Error(), `"colour"`) {
		t.Fatalf("unknown column error = %v", err)
	}
	if _, err := ParseImport(strings.NewReader("name,boot_macs\n")); err == nil || !strings.Contains(err.Error(), "bmc_address") {
		t.Fatalf("missing column error = %v", err)
	}
}
