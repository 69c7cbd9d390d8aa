package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/ops"
)

// clientConfig is what every CLI command needs to reach the cluster.
type clientConfig struct {
	Kubeconfig string
	Namespace  string
}

func (c *clientConfig) bind(fs *pflag.FlagSet) {
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig (default $KUBECONFIG, then ~/.kube/config)")
	fs.StringVarP(&c.Namespace, "namespace", "n", "", "namespace (default: the kubeconfig context's)")
}

func (c *clientConfig) client() (client.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.Kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading kubeconfig: %w", err)
	}
	rc.QPS, rc.Burst = 200, 400 // imports of thousands of rows
	rc.UserAgent = "anvil-cli/" + version
	ns := c.Namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	cl, err := client.New(rc, client.Options{Scheme: newScheme()})
	return cl, ns, err
}

func newHostsCommand() *cobra.Command {
	cc := &clientConfig{}
	cmd := &cobra.Command{Use: "hosts", Short: "Register, inspect and power Hosts"}
	cc.bind(cmd.PersistentFlags())
	cmd.AddCommand(newHostsImportCommand(cc), newHostsListCommand(cc), newHostsAckPowerCommand(cc), newHostsPowerCommand(cc))
	return cmd
}

func newHostsImportCommand(cc *clientConfig) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Create Hosts and their BMC credential Secrets from a CSV or YAML file (- for stdin)",
		Long: "Every row is validated first; if any row is bad, every bad row is reported by line\n" +
			"number and nothing is created. CSV columns: " + strings.Join(inventory.CSVColumns, ", ") + ".\n" +
			"boot_macs and labels separate items with ';'. Re-running an import is safe.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var r io.Reader = cmd.InOrStdin()
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				r = f
			}
			rows, err := inventory.ParseImport(r)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			c, ns, err := cc.client()
			if err != nil {
				return err
			}
			start := time.Now()
			res, err := inventory.Import(cmd.Context(), c, rows, inventory.ImportOptions{Namespace: ns, DryRun: dryRun})
			if err != nil {
				return err
			}
			verb := "applied"
			if dryRun {
				verb = "validated (dry run, nothing stored)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d Host(s) %s in %.1fs\n", res.Applied, verb, time.Since(start).Seconds())
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "validate locally and with the API server, store nothing")
	return cmd
}

func newHostsListCommand(cc *clientConfig) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List Hosts with their state, power and claim",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := cc.client()
			if err != nil {
				return err
			}
			var list metalv1.HostList
			var opts []client.ListOption
			if !all {
				opts = append(opts, client.InNamespace(ns))
			}
			if err := c.List(cmd.Context(), &list, opts...); err != nil {
				return err
			}
			printHosts(cmd.OutOrStdout(), list.Items, all)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list Hosts in every namespace")
	return cmd
}

func printHosts(w io.Writer, hosts []metalv1.Host, withNS bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if withNS {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "NAME\tSTATE\tPOWER\tMACHINE\tMAC\tBMC\tMESSAGE\tAGE")
	for _, h := range hosts {
		if withNS {
			fmt.Fprintf(tw, "%s\t", h.Namespace)
		}
		machine, mac, msg := "-", "-", ""
		if h.Spec.ConsumerRef != nil {
			machine = h.Spec.ConsumerRef.Name
		}
		if len(h.Spec.BootMACs) > 0 {
			mac = h.Spec.BootMACs[0]
		}
		for _, c := range h.Status.Conditions {
			if c.Status == "False" && c.Message != "" {
				msg = c.Message
				break
			}
		}
		if c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionValid); c != nil && msg == "" && c.Status == "False" {
			msg = c.Reason
		}
		if len(msg) > 72 {
			msg = msg[:69] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Name, orDash(string(h.Status.State)), orDash(string(h.Status.PowerState)),
			machine, mac, h.Spec.BMC.Address, msg, duration.HumanDuration(time.Since(h.CreationTimestamp.Time)))
	}
	tw.Flush()
}

// orDash takes any string type, so the API's enums print without a cast.
func orDash[S ~string](s S) string {
	if s == "" {
		return "-"
	}
	return string(s)
}

func newHostsAckPowerCommand(cc *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "ack-power HOST",
		Short: "Confirm that a person did the pending power action of a manual:// Host",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := cc.client()
			if err != nil {
				return err
			}
			msg, err := ops.AckPower(cmd.Context(), c, client.ObjectKey{Namespace: ns, Name: args[0]})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
}

func newHostsPowerCommand(cc *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "power HOST on|off|cycle",
		Short: "Power a Host on or off (spec.online), or cycle it once",
		Long: "on and off set the Host's spec.online; Anvil drives the power there through the BMC and keeps\n" +
			"it there. cycle asks for one power reset of a running Host (annotation " + inventory.AnnotationPowerCycle + ";\n" +
			"the Host's status.powerCycleID shows when it was handled): a network boot in flight goes first,\n" +
			"and a Host that is off is refused (power it on instead). A manual:// Host's power action waits\n" +
			"for a person: anvil hosts ack-power HOST once it is done.",
		Args: cobra.ExactArgs(2),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 1 {
				return []cobra.Completion{"on", "off", "cycle"}, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var do func(context.Context, client.Client, types.NamespacedName) (string, error)
			switch args[1] {
			case "on", "off":
				on := args[1] == "on"
				do = func(ctx context.Context, c client.Client, key types.NamespacedName) (string, error) {
					return ops.SetOnline(ctx, c, key, on)
				}
			case "cycle":
				do = ops.PowerCycle
			default:
				return fmt.Errorf("unknown power action %q: use on, off or cycle", args[1])
			}
			c, ns, err := cc.client()
			if err != nil {
				return err
			}
			msg, err := do(cmd.Context(), c, client.ObjectKey{Namespace: ns, Name: args[0]})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
}
