package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/inventory"
)

func newBMCCommand() *cobra.Command {
	cc := &clientConfig{}
	cmd := &cobra.Command{Use: "bmc", Short: "Talk to a Host's BMC directly"}
	cc.bind(cmd.PersistentFlags())
	var timeout time.Duration
	var cipher int
	var allow string
	check := &cobra.Command{
		Use:   "check HOST",
		Short: "Connect to a Host's BMC and print its power state and system facts, or the exact failure",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := cc.client()
			if err != nil {
				return err
			}
			var h metalv1.Host
			if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: args[0]}, &h); err != nil {
				return err
			}
			if h.Spec.BMC.Address == "" {
				return fmt.Errorf("host %s has no BMC address yet (discovered, not accepted)", h.Name)
			}
			allowed, err := netguard.ParsePrefixes("bmc-allow-cidrs", allow)
			if err != nil {
				return err
			}
			opts, err := inventory.DriverOptions(cmd.Context(), c, &h, inventory.PowerOptions{CallTimeout: timeout, IPMICipherSuite: cipher})
			if err != nil {
				return err
			}
			opts.Guard = netguard.Guard{Allow: allowed}
			return checkBMC(cmd, cmd.OutOrStdout(), opts)
		},
	}
	check.Flags().DurationVar(&timeout, "timeout", 60*time.Second, "deadline for each BMC call")
	check.Flags().IntVar(&cipher, "ipmi-cipher-suite", 3, "RMCP+ cipher suite for ipmi:// BMCs")
	check.Flags().StringVar(&allow, "bmc-allow-cidrs", "", "comma-separated CIDRs the BMC may be in although loopback, link-local or cloud metadata (as anvil serve's flag)")
	cmd.AddCommand(check)
	return cmd
}

func checkBMC(cmd *cobra.Command, w io.Writer, opts bmc.Options) error {
	ctx := cmd.Context()
	fmt.Fprintf(w, "BMC:      %s (user %q)\n", opts.Address, opts.Credentials.Username)
	d, err := bmc.Open(opts)
	if err != nil {
		return bmc.Redact(err, opts.Credentials.Password)
	}
	defer d.Close(ctx)
	start := time.Now()
	ps, err := d.PowerState(ctx)
	if err != nil {
		return fmt.Errorf("reading power state: %w", bmc.Redact(err, opts.Credentials.Password))
	}
	fmt.Fprintf(w, "Power:    %s (%.1fs)\n", ps, time.Since(start).Seconds())
	f, err := d.Facts(ctx)
	if err != nil {
		return fmt.Errorf("reading system facts: %w", bmc.Redact(err, opts.Credentials.Password))
	}
	for _, kv := range [][2]string{{"Vendor", f.Manufacturer}, {"Model", f.Model}, {"Serial", f.SerialNumber}, {"UUID", f.UUID}, {"CPU", cpuLine(f)}, {"Memory", memLine(f)}, {"MACs", strings.Join(f.MACs, ", ")}} {
		if kv[1] != "" {
			fmt.Fprintf(w, "%-9s %s\n", kv[0]+":", kv[1])
		}
	}
	return nil
}

func cpuLine(f bmc.Facts) string {
	if f.CPUCount == 0 {
		return f.CPUModel
	}
	return fmt.Sprintf("%d x %s", f.CPUCount, f.CPUModel)
}

func memLine(f bmc.Facts) string {
	if f.MemoryMiB == 0 {
		return ""
	}
	return fmt.Sprintf("%d MiB", f.MemoryMiB)
}
