package renderbench

import (
	"context"
	"strings"
	"testing"

	"anvil.dev/anvil/render"
)

func TestVarsDistinct(t *testing.T) {
	seen := map[string]bool{}
	for i := range 1000 {
		v := Vars(i)
		for _, k := range []string{v.Hostname, v.Join.Token, v.Agent.Credential, v.MACs[0], v.Addresses[0]} {
			if seen[k] {
				t.Fatalf("host %d repeats %q", i, k)
			}
			seen[k] = true
		}
	}
}

// The benchmark's template must render for real, or the cold figure would
// time an error path.
func TestTemplateRenders(t *testing.T) {
	r := render.NewRenderer(render.Options{})
	out, err := r.Ignition(context.Background(), nodeTemplate, render.VariantFCOS, Vars(7))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"ignition":{"version":"3.5.0"`) {
		t.Errorf("unexpected output: %.200s", out)
	}
	if _, err := r.Ignition(context.Background(), nodeTemplate, render.VariantFCOS, Vars(7)); err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); st.Hits != 1 || st.Renders != 1 {
		t.Errorf("second identical request: %+v, want one hit and one render", st)
	}
}
