package render

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRenderIgnitionVariants(t *testing.T) {
	vars := hostVars(t)
	tests := []struct {
		name        string
		variant     Variant
		tmpl        string
		extra       map[string]string
		wantVersion string
		// wantFiles maps a path to a substring its decoded content must hold.
		wantFiles map[string]string
	}{
		{
			name: "fcos 1.6", variant: VariantFCOS, tmpl: "node.bu.tmpl",
			extra:       map[string]string{"variant": "fcos", "butaneVersion": "1.6.0"},
			wantVersion: "3.5.0",
			wantFiles: map[string]string{
				"/etc/hostname":                          "node-a1",
				"/etc/kubernetes/bootstrap-kubelet.conf": "token: " + vars.Join.Token,
				"/etc/kubernetes/pki/ca.crt":             vars.Join.CACertPEM,
				"/etc/anvil/agent.env":                   "ANVIL_CREDENTIAL=" + vars.Agent.Credential,
				"/opt/bin/kubelet":                       "remote:" + vars.Join.KubeletURL,
				"unit:kubelet.service":                   "--provider-id=" + vars.Join.ProviderID,
			},
		},
		{
			name: "fcos 1.7", variant: VariantFCOS, tmpl: "node.bu.tmpl",
			extra:       map[string]string{"variant": "fcos", "butaneVersion": "1.7.0"},
			wantVersion: "3.6.0",
			wantFiles:   map[string]string{"/etc/kubernetes/bootstrap-kubelet.conf": "token: " + vars.Join.Token},
		},
		{
			name: "fcos 1.4", variant: VariantFCOS, tmpl: "node.bu.tmpl",
			extra:       map[string]string{"variant": "fcos", "butaneVersion": "1.4.0"},
			wantVersion: "3.3.0",
			wantFiles:   map[string]string{"/etc/anvil/agent.env": "MACS=52:54:00:12:34:56,52:54:00:12:34:57"},
		},
		{
			name: "flatcar 1.1", variant: VariantFlatcar, tmpl: "node.bu.tmpl",
			extra:       map[string]string{"variant": "flatcar", "butaneVersion": "1.1.0"},
			wantVersion: "3.4.0",
			wantFiles: map[string]string{
				"/etc/kubernetes/bootstrap-kubelet.conf": "token: " + vars.Join.Token,
				"/etc/kubernetes/pki/ca.crt":             vars.Join.CACertPEM,
			},
		},
		{
			name: "flatcar 1.0", variant: VariantFlatcar, tmpl: "node.bu.tmpl",
			extra:       map[string]string{"variant": "flatcar", "butaneVersion": "1.0.0"},
			wantVersion: "3.3.0",
			wantFiles:   map[string]string{"/etc/hostname": "node-a1"},
		},
		{
			name: "raw ignition", variant: VariantIgnition, tmpl: "node.ign.tmpl",
			wantVersion: "3.4.0",
			wantFiles: map[string]string{
				"/etc/kubernetes/bootstrap-token": vars.Join.Token,
				"/etc/kubernetes/pki/ca.crt":      vars.Join.CACertPEM,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := vars
			v.Extra = tc.extra
			out, err := RenderIgnition(mustRead(t, tc.tmpl), tc.variant, v, RenderOptions{Strict: true})
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			var head struct {
				Ignition struct{ Version string }
			}
			if err := json.Unmarshal(out, &head); err != nil {
				t.Fatal(err)
			}
			if head.Ignition.Version != tc.wantVersion {
				t.Errorf("ignition version %q, want %q", head.Ignition.Version, tc.wantVersion)
			}
			files := ignFiles(t, out)
			for path, want := range tc.wantFiles {
				got, ok := files[path]
				if !ok {
					t.Errorf("no %s in config", path)
					continue
				}
				if !strings.Contains(got, want) {
					t.Errorf("%s = %q, want it to contain %q", path, got, want)
				}
			}
		})
	}
}

// TestRenderedConfigPassesIgnitionValidate runs upstream's ignition-validate
// command on rendered configs, an independent check of the library call.
func TestRenderedConfigPassesIgnitionValidate(t *testing.T) {
	bin := ignitionValidate(t)
	dir := t.TempDir()
	vars := hostVars(t)
	for _, tc := range []struct {
		name    string
		variant Variant
		tmpl    string
		extra   map[string]string
	}{
		{"fcos", VariantFCOS, "node.bu.tmpl", map[string]string{"variant": "fcos", "butaneVersion": "1.6.0"}},
		{"flatcar", VariantFlatcar, "node.bu.tmpl", map[string]string{"variant": "flatcar", "butaneVersion": "1.1.0"}},
		{"ignition", VariantIgnition, "node.ign.tmpl", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := vars
			v.Extra = tc.extra
			out, err := RenderIgnition(mustRead(t, tc.tmpl), tc.variant, v, RenderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, tc.name+".ign")
			if err := os.WriteFile(p, out, 0o600); err != nil {
				t.Fatal(err)
			}
			if msg, err := exec.Command(bin, p).CombinedOutput(); err != nil {
				t.Fatalf("ignition-validate rejected the config: %v\n%s", err, msg)
			}
		})
	}
	// And the validator does reject a broken config, so the check above means something.
	bad := filepath.Join(dir, "bad.ign")
	if err := os.WriteFile(bad, []byte(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"relative"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(bin, bad).Run(); err == nil {
		t.Fatal("ignition-validate accepted a relative file path")
	}
}

func TestRenderErrorsNameTheLine(t *testing.T) {
	vars := hostVars(t)
	// The CA PEM expands to many lines before the faulty line, so the
	// rendered line differs from the template line and the mapping is tested.
	const pemThenBadIndent = `variant: fcos
version: 1.6.0
storage:
  files:
    - path: /etc/kubernetes/pki/ca.crt
      contents:
        inline: |
{{ .Join.CACertPEM | indent 10 }}
    - path: /etc/hostname
      contents:
        inline: {{ .Hostname }}
     mode: 0644
`
	tests := []struct {
		name       string
		variant    Variant
		tmpl       string
		opts       RenderOptions
		wantStage  Stage
		wantLine   int
		wantColumn int // -1: do not check
		wantReason string
	}{
		{
			name: "bad YAML indentation after a multi-line value", variant: VariantFCOS, tmpl: pemThenBadIndent,
			wantStage: StageButane, wantLine: 12, wantColumn: -1, wantReason: "did not find expected '-' indicator",
		},
		{
			name: "missing map key", variant: VariantFCOS,
			tmpl:      "variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: /etc/rack\n      contents:\n        inline: {{ .Labels.rack }}\n",
			wantStage: StageTemplate, wantLine: 7, wantColumn: 27, wantReason: `map has no entry for key "rack"`,
		},
		{
			name: "missing Extra key through index is not an error but a missing field is", variant: VariantFCOS,
			tmpl:      "variant: fcos\nversion: 1.6.0\n# {{ .Join.Tokn }}\n",
			wantStage: StageTemplate, wantLine: 3, wantColumn: -1, wantReason: "can't evaluate field Tokn",
		},
		{
			name: "unclosed action", variant: VariantFCOS,
			tmpl:      "variant: fcos\nversion: 1.6.0\n\n\n# {{ .Hostname \n",
			wantStage: StageTemplate, wantLine: 5, wantColumn: -1, wantReason: "unclosed action",
		},
		{
			name: "unknown function", variant: VariantFCOS,
			tmpl:      "variant: fcos\nversion: 1.6.0\n# {{ frobnicate .Hostname }}\n",
			wantStage: StageTemplate, wantLine: 3, wantColumn: -1, wantReason: `function "frobnicate" not defined`,
		},
		{
			name: "semantic error with column", variant: VariantFCOS,
			tmpl:      "variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: etc/{{ .Hostname }}\n",
			wantStage: StageButane, wantLine: 5, wantColumn: 0, wantReason: "path not absolute",
		},
		{
			name: "semantic error on a verbatim line keeps the column", variant: VariantFCOS,
			tmpl:      "variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: etc/hostname\n",
			wantStage: StageButane, wantLine: 5, wantColumn: 13, wantReason: "path not absolute",
		},
		{
			name: "warning is an error only in strict mode", variant: VariantFCOS,
			tmpl:      "variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: /etc/x\n      mode: 644\n",
			opts:      RenderOptions{Strict: true},
			wantStage: StageButane, wantLine: 6, wantColumn: 13, wantReason: "unreasonable mode",
		},
		{
			name: "wrong variant", variant: VariantFlatcar,
			tmpl:      "# a comment\nvariant: fcos\nversion: 1.6.0\n",
			wantStage: StageButane, wantLine: 2, wantColumn: -1, wantReason: `declares variant "fcos"`,
		},
		{
			name: "unknown version", variant: VariantFCOS,
			tmpl:      "variant: fcos\nversion: 9.9.0\n",
			wantStage: StageButane, wantLine: 2, wantColumn: -1, wantReason: "unsupported fcos Butane version",
		},
		{
			name: "experimental version needs opt-in", variant: VariantFCOS,
			tmpl:      "variant: fcos\nversion: 1.8.0-experimental\n",
			wantStage: StageButane, wantLine: 2, wantColumn: -1, wantReason: "unsupported fcos Butane version",
		},
		{
			name: "type error", variant: VariantFCOS,
			tmpl:      "variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: /etc/x\n      mode: {{ .Hostname }}\n",
			wantStage: StageButane, wantLine: 6, wantColumn: -1, wantReason: "cannot unmarshal",
		},
		{
			name: "raw ignition semantic error", variant: VariantIgnition,
			tmpl:      "{\n  \"ignition\": {\"version\": \"3.4.0\"},\n  \"storage\": {\"files\": [\n    {\"path\": \"relative\"}\n  ]}\n}\n",
			wantStage: StageIgnition, wantLine: 4, wantColumn: -1, wantReason: "path not absolute",
		},
		{
			name: "raw ignition unsupported version", variant: VariantIgnition,
			tmpl:      `{"ignition": {"version": "2.2.0"}}`,
			wantStage: StageIgnition, wantLine: 0, wantColumn: -1, wantReason: `unsupported Ignition spec version "2.2.0"`,
		},
		{
			name: "not an ignition variant", variant: VariantCloudInit,
			tmpl:      "#cloud-config\n",
			wantStage: StageTemplate, wantLine: 0, wantColumn: -1, wantReason: "not an Ignition variant",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RenderIgnition(tc.tmpl, tc.variant, vars, tc.opts)
			if err == nil {
				t.Fatalf("no error; rendered %s", out)
			}
			var te *TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("error %T %v is not a *TemplateError", err, err)
			}
			if te.Stage != tc.wantStage || te.Line != tc.wantLine || (tc.wantColumn >= 0 && te.Column != tc.wantColumn) {
				t.Errorf("got stage %q line %d column %d, want %q line %d column %d (%v)",
					te.Stage, te.Line, te.Column, tc.wantStage, tc.wantLine, tc.wantColumn, err)
			}
			if !strings.Contains(te.Reason, tc.wantReason) {
				t.Errorf("reason %q does not contain %q", te.Reason, tc.wantReason)
			}
			if !strings.HasPrefix(err.Error(), string(tc.wantStage)) {
				t.Errorf("message %q does not start with the stage", err)
			}
		})
	}
}

func TestWarningsPassWithoutStrict(t *testing.T) {
	tmpl := "variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: /etc/x\n      mode: 644\n"
	if _, err := RenderIgnition(tmpl, VariantFCOS, SampleVars(), RenderOptions{}); err != nil {
		t.Fatalf("non-strict render failed on a warning: %v", err)
	}
	if _, err := RenderIgnition(tmpl, VariantFCOS, SampleVars(), RenderOptions{Strict: true}); err == nil {
		t.Fatal("strict render accepted a warning")
	}
}

func TestExperimentalWithOptIn(t *testing.T) {
	tmpl := "variant: fcos\nversion: 1.8.0-experimental\n"
	out, err := RenderIgnition(tmpl, VariantFCOS, SampleVars(), RenderOptions{AllowExperimental: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"3.7.0-experimental"`) {
		t.Fatalf("unexpected output %s", out)
	}
}

func TestOutputSizeLimit(t *testing.T) {
	tmpl := "variant: fcos\nversion: 1.6.0\n# {{ range .MACs }}{{ $.Join.CACertPEM }}{{ end }}\n"
	_, err := RenderIgnition(tmpl, VariantFCOS, SampleVars(), RenderOptions{MaxOutputBytes: 512})
	var te *TemplateError
	if !errors.As(err, &te) || te.Stage != StageTemplate || !strings.Contains(te.Reason, "size limit") {
		t.Fatalf("got %v, want a size limit error", err)
	}
}

func TestSecretsNeverInErrors(t *testing.T) {
	vars := hostVars(t)
	vars.SecretExtra = map[string]string{"bmcPassword": "Sup3rS3cr3tBmcPassw0rd"}
	secrets := []string{vars.Join.Token, vars.Agent.Credential, vars.SecretExtra["bmcPassword"]}
	tests := []struct {
		name    string
		variant Variant
		tmpl    string
	}{
		{"token as a YAML int (yaml quotes a prefix)", VariantFCOS,
			"variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: /etc/x\n      mode: {{ .Agent.Credential }}\n"},
		{"token secret part as int", VariantFCOS,
			"variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: /etc/x\n      mode: {{ index (split \".\" .Join.Token) 1 }}\n"},
		{"secret as required() message", VariantFCOS,
			"variant: fcos\nversion: 1.6.0\n# {{ required .Join.Token \"\" }}\n"},
		{"secret in a map key lookup", VariantFCOS,
			"variant: fcos\nversion: 1.6.0\n# {{ index .Labels .SecretExtra.bmcPassword | required .SecretExtra.bmcPassword }}\n"},
		{"secret as a relative path", VariantFCOS,
			"variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: {{ .Agent.Credential }}\n"},
		{"secret in a variant", VariantFCOS,
			"variant: {{ .Join.Token }}\nversion: 1.6.0\n"},
		{"secret in a version", VariantFCOS,
			"variant: fcos\nversion: {{ .SecretExtra.bmcPassword }}\n"},
		{"secret as a butane key", VariantFCOS,
			"variant: fcos\nversion: 1.6.0\n{{ .Agent.Credential }}: 1\n"},
		{"secret as an ignition version", VariantIgnition,
			`{"ignition": {"version": "{{ .Join.Token }}"}}`},
		{"secret breaking JSON", VariantIgnition,
			`{"ignition": {"version": "3.4.0"}, {{ .Agent.Credential }} }`},
		{"secret in a YAML syntax error", VariantFCOS,
			"variant: fcos\nversion: 1.6.0\nx: [{{ .Join.Token }}\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RenderIgnition(tc.tmpl, tc.variant, vars, RenderOptions{Strict: true})
			if err == nil {
				t.Fatal("expected an error")
			}
			assertNoSecret(t, err.Error(), secrets)
			var te *TemplateError
			if errors.As(err, &te) {
				assertNoSecret(t, te.Reason, secrets)
			}
		})
	}
	// cloud-init errors as well.
	_, err := RenderNoCloud(NoCloudTemplates{UserData: "#cloud-config\nfoo: [{{ .Agent.Credential }}\n"}, vars, RenderOptions{})
	if err == nil {
		t.Fatal("expected a cloud-init error")
	}
	assertNoSecret(t, err.Error(), secrets)
}

// assertNoSecret fails if msg holds any secret or any 8-byte window of one.
func assertNoSecret(t *testing.T, msg string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		for i := 0; i+8 <= len(s); i++ {
			if strings.Contains(msg, s[i:i+8]) {
				t.Fatalf("error leaks secret fragment %q: %s", s[i:i+8], msg)
			}
		}
	}
}

func TestScrubber(t *testing.T) {
	v := Vars{Join: Join{Token: "abcdef.0123456789abcdef"}, Agent: Agent{Credential: "CRED-xyz-987654321"}}
	sc := newScrubber(&v)
	tests := []struct{ in, want string }{
		{"no secret here", "no secret here"},
		{"token abcdef.0123456789abcdef!", "token [REDACTED]!"},
		{"truncated `0123456...`", "truncated `[REDACTED]...`"},
		{"b64 " + "Q1JFRC14eXotOTg3NjU0MzIx", "b64 [REDACTED]"},
		{"short abc is kept", "short abc is kept"},
	}
	for _, tc := range tests {
		if got := sc.scrub(tc.in); got != tc.want {
			t.Errorf("scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLineMap(t *testing.T) {
	tmpl := "a\nb: {{ x }}\n{{ multi }}\nc\nd"
	rendered := "a\nb: 1\nm1\nm2\nm3\nc\nd"
	lm := newLineMap(tmpl, rendered)
	for _, tc := range []struct{ rl, rc, wl, wc int }{
		{1, 3, 1, 3}, // verbatim line keeps its column
		{2, 4, 2, 0}, // action line loses its column
		{3, 1, 3, 0}, // expansion lines map to the action line
		{5, 2, 3, 0},
		{6, 1, 4, 1},
		{7, 1, 5, 1},
		{99, 1, 0, 0},
	} {
		if l, c := lm.templatePos(tc.rl, tc.rc); l != tc.wl || c != tc.wc {
			t.Errorf("templatePos(%d,%d) = %d,%d, want %d,%d", tc.rl, tc.rc, l, c, tc.wl, tc.wc)
		}
	}
}

func TestFuncs(t *testing.T) {
	v := SampleVars()
	v.Extra = map[string]string{"multi": "x\ny\n", "empty": ""}
	tests := []struct{ tmpl, want string }{
		{`{{ .Extra.multi | indent 2 }}`, "  x\n  y\n"},
		{`a:{{ .Extra.multi | nindent 2 }}`, "a:\n  x\n  y\n"},
		{`{{ quote "a\"b\n" }}`, `"a\"b\n"`},
		{`{{ toJSON .MACs }}`, `["52:54:00:00:00:01","52:54:00:00:00:02"]`},
		{`{{ b64enc "hi" }}`, "aGk="},
		{`{{ b64enc "hi" | b64dec }}`, "hi"},
		{`{{ sha256sum "" }}`, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{`{{ dataURL "hi" }}`, "data:;base64,aGk="},
		{`{{ default "d" .Extra.empty }}`, "d"},
		{`{{ default "d" .Hostname }}`, "sample-host"},
		{`{{ .Hostname | upper | trimPrefix "SAMPLE-" }}`, "HOST"},
	}
	for _, tc := range tests {
		out, terr := executeTemplate(tc.tmpl, &v, 0, scrubber{})
		if terr != nil {
			t.Errorf("%s: %v", tc.tmpl, terr)
			continue
		}
		if string(out) != tc.want {
			t.Errorf("%s = %q, want %q", tc.tmpl, out, tc.want)
		}
	}
}

func TestTemplateErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		e    TemplateError
		want string
	}{
		{TemplateError{Stage: StageTemplate, Line: 3, Column: 13, Reason: "r"}, "template: line 3, column 13: r"},
		{TemplateError{Stage: StageButane, Line: 12, RenderedLine: 23, Reason: "r"}, "butane: line 12 (rendered line 23): r"},
		{TemplateError{Stage: StageButane, Line: 5, Column: 7, RenderedLine: 5, RenderedColumn: 7, Reason: "r"}, "butane: line 5, column 7: r"},
		{TemplateError{Stage: StageIgnition, RenderedLine: 1, RenderedColumn: 345, Reason: "r"}, "ignition (ignition JSON line 1, column 345): r"},
		{TemplateError{Stage: StageCloudInit, Part: "user-data", Line: 2, RenderedLine: 2, Reason: "r"}, "cloud-init user-data: line 2: r"},
		{TemplateError{Stage: StageTemplate, Reason: "r"}, "template: r"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
