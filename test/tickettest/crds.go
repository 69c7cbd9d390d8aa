package tickettest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"anvil.dev/anvil/test/need"
)

// ticketCRDs are the CRDs of the ticket types.
var ticketCRDs = []string{"ticketdeliveries.metal.anvil.dev", "ticketendpoints.metal.anvil.dev"}

// InstallCRDs makes sure the API server serves TicketEndpoint and
// TicketDelivery. Once `make generate` has put their CRDs in deploy/crds,
// test/envtest installs them and this does nothing; before that it
// generates them from api/ with bin/controller-gen.
func InstallCRDs(cfg *rest.Config) error {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	missing := false
	for _, n := range ticketCRDs {
		if err := c.Get(context.Background(), client.ObjectKey{Name: n}, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	root, err := need.RepoRoot()
	if err != nil {
		return err
	}
	gen := filepath.Join(root, "bin", "controller-gen")
	if _, err := os.Stat(gen); err != nil {
		return fmt.Errorf("ticket CRDs are not in deploy/crds yet and bin/controller-gen is missing: run make tools")
	}
	dir, err := os.MkdirTemp("", "ticket-crds-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(gen, "crd:maxDescLen=400", "paths=./api/...", "output:crd:artifacts:config="+dir)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("controller-gen: %v\n%s", err, out)
	}
	paths := []string{filepath.Join(dir, "metal.anvil.dev_ticketdeliveries.yaml"), filepath.Join(dir, "metal.anvil.dev_ticketendpoints.yaml")}
	_, err = crenvtest.InstallCRDs(cfg, crenvtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true})
	return err
}
