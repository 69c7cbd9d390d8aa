package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Run(m, &env) }

// runCLI runs the anvil command in-process, as a user would from a shell.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func writeCSV(t *testing.T, dir string, rows []string) string {
	t.Helper()
	p := filepath.Join(dir, "hosts.csv")
	body := "name,bmc_address,username,password,boot_macs,rack,failure_domain\n" + strings.Join(rows, "\n") + "\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const cliPassword = "pw-Zq81-never-printed"

func TestHostsImport1000(t *testing.T) {
	dir := t.TempDir()
	kc, err := env.WriteKubeconfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	rows := make([]string, 1000)
	for i := range rows {
		rows[i] = fmt.Sprintf("node-%04d,ipmi://10.20.%d.%d:623,admin,%s,02:00:00:00:%02x:%02x,r%d,fd-%d", i, i/250, i%250+1, cliPassword, i/256, i%256, i/40, i%3)
	}
	out, err := runCLI(t, "hosts", "import", writeCSV(t, dir, rows), "--kubeconfig", kc, "-n", ns)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	if strings.Contains(out, cliPassword) {
		t.Fatal("import output shows a password")
	}
	ctx := context.Background()
	var hosts metalv1.HostList
	if err := env.Client.List(ctx, &hosts, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var secrets corev1.SecretList
	if err := env.Client.List(ctx, &secrets, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/managed-by": "anvil"}); err != nil {
		t.Fatal(err)
	}
	if len(hosts.Items) != 1000 || len(secrets.Items) != 1000 {
		t.Fatalf("got %d Hosts and %d Secrets, want 1000 each", len(hosts.Items), len(secrets.Items))
	}
	var h metalv1.Host
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "node-0041"}, &h); err != nil {
		t.Fatal(err)
	}
	if h.Labels[metalv1.LabelFailureDomain] != "fd-2" || h.Spec.BMC.CredentialsName != "node-0041-bmc" || h.Spec.BootMACs[0] != "02:00:00:00:00:29" {
		t.Fatalf("Host node-0041 = %+v", h)
	}
	var s corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "node-0041-bmc"}, &s); err != nil {
		t.Fatal(err)
	}
	if string(s.Data["password"]) != cliPassword || len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != h.UID {
		t.Fatalf("Secret not written or not owned by its Host: owners=%v", s.OwnerReferences)
	}

	// Importing the same file again changes nothing and fails nothing.
	if out, err := runCLI(t, "hosts", "import", filepath.Join(dir, "hosts.csv"), "--kubeconfig", kc, "-n", ns); err != nil {
		t.Fatalf("re-import: %v\n%s", err, out)
	}

	// The list command shows them.
	out, err = runCLI(t, "hosts", "list", "--kubeconfig", kc, "-n", ns)
	if err != nil || strings.Count(out, "\n") != 1001 || !strings.Contains(out, "node-0999") {
		t.Fatalf("hosts list: %v, %d lines", err, strings.Count(out, "\n"))
	}
}

func TestHostsImportBadRowsCreateNothing(t *testing.T) {
	dir := t.TempDir()
	kc, err := env.WriteKubeconfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	var rows []string
	for i := range 20 {
		rows = append(rows, fmt.Sprintf("ok-%d,ipmi://10.30.0.%d,admin,%s,02:00:00:01:00:%02x,r1,fd-a", i, i+1, cliPassword, i))
	}
	rows[4] = "bad-mac,ipmi://10.30.1.1,admin," + cliPassword + ",02:00:00:01:zz:01,r1,fd-a"     // line 6
	rows[9] = "bad-scheme,idrac://10.30.1.2,admin," + cliPassword + ",02:00:00:01:01:02,r1,fd-a" // line 11
	rows[14] = "dup-mac,ipmi://10.30.1.3,admin," + cliPassword + ",02:00:00:01:00:00,r1,fd-a"    // line 16, same MAC as line 2
	for _, dry := range []bool{false, true} {
		args := []string{"hosts", "import", writeCSV(t, dir, rows), "--kubeconfig", kc, "-n", ns}
		if dry {
			args = append(args, "--dry-run")
		}
		out, err := runCLI(t, args...)
		if err == nil {
			t.Fatalf("import of bad rows succeeded:\n%s", out)
		}
		msg := err.Error()
		for _, want := range []string{"3 bad row(s)", "line 6 (bad-mac)", "line 11 (bad-scheme)", "line 16 (dup-mac)", "also on line 2"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error lacks %q:\n%s", want, msg)
			}
		}
		if strings.Contains(msg+out, cliPassword) {
			t.Fatal("error output shows a password")
		}
	}
	var hosts metalv1.HostList
	if err := env.Client.List(context.Background(), &hosts, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var secrets corev1.SecretList
	if err := env.Client.List(context.Background(), &secrets, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/managed-by": "anvil"}); err != nil {
		t.Fatal(err)
	}
	if len(hosts.Items) != 0 || len(secrets.Items) != 0 {
		t.Fatalf("bad import created %d Hosts and %d Secrets", len(hosts.Items), len(secrets.Items))
	}
}

func TestApplyEnv(t *testing.T) {
	cmd := newServeCommand()
	env := map[string]string{"ANVIL_HOST_WORKERS": "3", "ANVIL_LOG_FORMAT": "text", "ANVIL_LEADER_ELECT": "false"}
	if err := cmd.Flags().Parse([]string{"--log-format=json"}); err != nil {
		t.Fatal(err)
	}
	if err := applyEnv(cmd.Flags(), func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	get := func(n string) string { return cmd.Flags().Lookup(n).Value.String() }
	if get("host-workers") != "3" || get("leader-elect") != "false" || get("log-format") != "json" {
		t.Fatalf("flags after env: workers=%s leader=%s format=%s (a flag on the command line wins)", get("host-workers"), get("leader-elect"), get("log-format"))
	}
	bad := func(k string) (string, bool) {
		if k == "ANVIL_HOST_WORKERS" {
			return "many", true
		}
		return "", false
	}
	if err := applyEnv(newServeCommand().Flags(), bad); err == nil || !strings.Contains(err.Error(), "ANVIL_HOST_WORKERS") {
		t.Fatalf("bad env error = %v", err)
	}
}
