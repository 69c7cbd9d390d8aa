//go:build !dev

package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newDevCommand stands in for `anvil dev` in the production binary: the real
// one links the Redfish emulator, the ipmi_sim harness and the QEMU lab
// (test/), which a binary that runs in the cluster must not carry.
func newDevCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "dev",
		Short:  "Not in this build: use bin/anvil-dev (make build) or go build -tags dev ./cmd/anvil",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("this anvil was built without `anvil dev` (it links the emulators and the QEMU lab): run `make run`, or use bin/anvil-dev from `make build` (go build -tags dev ./cmd/anvil)")
		},
		DisableFlagParsing: true,
	}
}
