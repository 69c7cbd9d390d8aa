package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// --capi is off unless asked for, and asked for where Cluster API's CRDs
// are missing (this API server has Anvil's only) it fails at setup with
// the fix, instead of a manager that never syncs.
func TestCAPIFlag(t *testing.T) {
	var cfg serveConfig
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	cfg.bind(fs)
	if err := fs.Parse(nil); err != nil || cfg.CAPI {
		t.Fatalf("default --capi = %v (err %v), want off", cfg.CAPI, err)
	}
	if err := fs.Parse([]string{"--capi"}); err != nil || !cfg.CAPI {
		t.Fatalf("--capi = %v (err %v), want on", cfg.CAPI, err)
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: newScheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	err = setupCAPI(mgr)
	if err == nil || !strings.Contains(err.Error(), "--capi: the API server does not serve cluster.x-k8s.io/v1beta2, Kind=Cluster (install Cluster API's core CRDs") {
		t.Fatalf("setupCAPI without Cluster API's CRDs: %v", err)
	}
}
