package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestRendererCachesIgnition(t *testing.T) {
	ctx := context.Background()
	r := NewRenderer(Options{})
	tmpl := mustRead(t, "node.bu.tmpl")
	vars := hostVars(t)

	first, err := r.Ignition(ctx, tmpl, VariantFCOS, vars)
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Ignition(ctx, tmpl, VariantFCOS, vars)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatal("cached config differs from the first render")
	}
	if s := r.Stats(); s.Renders != 1 || s.Hits != 1 || s.Misses != 1 {
		t.Fatalf("after two identical requests: %+v, want 1 render, 1 hit, 1 miss", s)
	}
	// The caller owns the returned bytes: scribbling on them must not
	// change what the next caller gets.
	for i := range second {
		second[i] = 'x'
	}
	third, _ := r.Ignition(ctx, tmpl, VariantFCOS, vars)
	if !bytes.Equal(first, third) {
		t.Fatal("cache entry was modified through a returned slice")
	}

	// Anything that changes the input renders again.
	changed := vars
	changed.Join.Token = "newtok.aaaaaaaaaaaaaaaa"
	changedExtra := vars
	changedExtra.Extra = map[string]string{"variant": "fcos", "butaneVersion": "1.6.0", "x": "y"}
	for _, tc := range []struct {
		name    string
		tmpl    string
		variant Variant
		vars    Vars
	}{
		{"token", tmpl, VariantFCOS, changed},
		{"extra map", tmpl, VariantFCOS, changedExtra},
		{"template", tmpl + "\n# comment\n", VariantFCOS, vars},
	} {
		before := r.Stats().Renders
		if _, err := r.Ignition(ctx, tc.tmpl, tc.variant, tc.vars); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := r.Stats().Renders; got != before+1 {
			t.Errorf("%s changed but renders went %d -> %d", tc.name, before, got)
		}
	}
	// Variant is part of the key: the same template for flatcar fails (it
	// declares fcos) instead of returning the cached fcos config.
	if _, err := r.Ignition(ctx, tmpl, VariantFlatcar, vars); err == nil {
		t.Fatal("variant is not part of the cache key")
	}
}

func TestRendererCachesErrors(t *testing.T) {
	r := NewRenderer(Options{})
	bad := "variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: relative\n"
	for i := 0; i < 3; i++ {
		_, err := r.Ignition(context.Background(), bad, VariantFCOS, SampleVars())
		var te *TemplateError
		if !errors.As(err, &te) || te.Line != 5 {
			t.Fatalf("attempt %d: got %v", i, err)
		}
	}
	if s := r.Stats(); s.Renders != 1 || s.Hits != 2 {
		t.Fatalf("stats %+v, want the failing render run once", s)
	}
}

func TestRendererCollapsesConcurrentRequests(t *testing.T) {
	r := NewRenderer(Options{})
	tmpl := mustRead(t, "node.bu.tmpl")
	vars := hostVars(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.Ignition(context.Background(), tmpl, VariantFCOS, vars); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Each request either hit the cache or joined the single flight.
	if s := r.Stats(); s.Renders != 1 {
		t.Fatalf("16 concurrent identical requests ran %d renders", s.Renders)
	}
}

func TestRendererIsBounded(t *testing.T) {
	r := NewRenderer(Options{CacheEntries: 2})
	tmpl := "variant: fcos\nversion: 1.6.0\n# {{ .Hostname }}\n"
	render := func(host string) {
		t.Helper()
		v := SampleVars()
		v.Hostname = host
		if _, err := r.Ignition(context.Background(), tmpl, VariantFCOS, v); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		render(fmt.Sprintf("h%d", i))
	}
	s := r.Stats()
	if s.Entries != 2 || s.Renders != 5 {
		t.Fatalf("stats %+v, want 2 entries after 5 distinct renders", s)
	}
	render("h4") // most recent: still cached
	render("h0") // evicted long ago: renders again
	if s2 := r.Stats(); s2.Renders != 6 || s2.Hits != 1 {
		t.Fatalf("stats %+v, want h4 hit and h0 re-rendered", s2)
	}

	// A byte bound as well.
	rb := NewRenderer(Options{CacheBytes: 1})
	if _, err := rb.Ignition(context.Background(), tmpl, VariantFCOS, SampleVars()); err != nil {
		t.Fatal(err)
	}
	if s := rb.Stats(); s.Entries != 0 || s.Bytes != 0 {
		t.Fatalf("entry larger than the cache was kept: %+v", s)
	}
}

func TestRendererNoCloudCache(t *testing.T) {
	r := NewRenderer(Options{})
	vars := hostVars(t)
	tmpls := NoCloudTemplates{UserData: mustRead(t, "user-data.tmpl"), NetworkConfig: mustRead(t, "network-config.tmpl")}
	// cloud-init fetches four files; each request asks the renderer.
	var ids []string
	for i := 0; i < 4; i++ {
		nc, err := r.NoCloud(context.Background(), tmpls, vars)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, nc.InstanceID)
		nc.UserData[0] = 'X' // callers own their copy
	}
	if s := r.Stats(); s.Renders != 1 || s.Hits != 3 {
		t.Fatalf("stats %+v, want 1 render and 3 hits", s)
	}
	nc, _ := r.NoCloud(context.Background(), tmpls, vars)
	if nc.UserData[0] != '#' || ids[0] != ids[3] {
		t.Fatal("cached NoCloud was modified through a returned value")
	}
}

func TestRendererValidate(t *testing.T) {
	r := NewRenderer(Options{Render: RenderOptions{Strict: true}})
	good := "variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: /etc/hostname\n      mode: 0644\n      contents:\n        inline: {{ quote .Hostname }}\n"
	if err := r.Validate(good, VariantFCOS); err != nil {
		t.Fatalf("valid template rejected: %v", err)
	}
	rack := "variant: fcos\nversion: 1.6.0\n# {{ .Labels.rack }}\n"
	err := r.Validate(rack, VariantFCOS)
	var te *TemplateError
	if !errors.As(err, &te) || te.Stage != StageTemplate || te.Line != 3 {
		t.Fatalf("template needing a label passed sample validation: %v", err)
	}
	v := SampleVars()
	v.Labels = map[string]string{"rack": "r1"}
	if err := r.ValidateWith(rack, VariantFCOS, v); err != nil {
		t.Fatalf("ValidateWith with the label: %v", err)
	}
	if err := r.Validate("#cloud-config\nhostname: {{ .Hostname }}\n", VariantCloudInit); err != nil {
		t.Fatalf("cloud-init user-data: %v", err)
	}
	if err := r.Validate("hostname: x\n", VariantCloudInit); err == nil {
		t.Fatal("user-data without a header passed")
	}
	if err := r.ValidateNoCloud(NoCloudTemplates{UserData: "#cloud-config\n", NetworkConfig: "version: 2\n"}); err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s.Renders != 0 {
		t.Fatalf("Validate used the cache: %+v", s)
	}
}
