package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
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
	cmd := &cobra.Command{Use: "hosts", Short: "Register and inspect Hosts"}
	cc.bind(cmd.PersistentFlags())
	cmd.AddCommand(newHostsImportCommand(cc), newHostsListCommand(cc), newHostsAckPowerCommand(cc))
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
			var h metalv1.Host
			if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: args[0]}, &h); err != nil {
				return err
			}
			p := h.Status.PendingPowerAction
			if p == nil {
				return fmt.Errorf("host %s has no pending power action", h.Name)
			}
			patch := client.MergeFrom(h.DeepCopy())
			if h.Annotations == nil {
				h.Annotations = map[string]string{}
			}
			h.Annotations[inventory.AnnotationAckPower] = inventory.PendingActionID(p)
			if err := c.Patch(cmd.Context(), &h, patch); err != nil {
				return err
			}
			what := "power " + string(p.Action)
			if p.BootDevice != "" {
				what += " with a one-time " + string(p.BootDevice) + " boot"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "acknowledged for %s: %s (requested %s)\n", h.Name, what, p.RequestedAt.UTC().Format(time.RFC3339))
			return nil
		},
	}
}
