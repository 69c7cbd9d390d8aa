package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func newTicketsCommand() *cobra.Command {
	cc := &clientConfig{}
	cmd := &cobra.Command{
		Use:   "tickets",
		Short: "Webhooks filed with the admins' ticketing systems (TicketDeliveries) and their state",
	}
	cc.bind(cmd.PersistentFlags())
	cmd.AddCommand(newTicketsListCommand(cc), newTicketsRedeliverCommand(cc))
	return cmd
}

func newTicketsListCommand(cc *clientConfig) *cobra.Command {
	var all, open bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List ticket deliveries: event, object, endpoint, delivery state and the receiver's ticket",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := cc.client()
			if err != nil {
				return err
			}
			var list metalv1.TicketDeliveryList
			var opts []client.ListOption
			if !all {
				opts = append(opts, client.InNamespace(ns))
			}
			if err := c.List(cmd.Context(), &list, opts...); err != nil {
				return err
			}
			items := list.Items[:0]
			for _, d := range list.Items {
				if !open || deliveryOpen(&d) {
					items = append(items, d)
				}
			}
			printTickets(cmd.OutOrStdout(), items, all, time.Now())
			return nil
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list deliveries in every namespace")
	cmd.Flags().BoolVar(&open, "open", false, "only deliveries not yet delivered (pending, retrying, refused)")
	return cmd
}

// deliveryOpen is a delivery someone may still need to look at.
func deliveryOpen(d *metalv1.TicketDelivery) bool {
	return d.Status.State != metalv1.TicketDelivered && d.Status.State != metalv1.TicketSuperseded
}

func printTickets(w io.Writer, ds []metalv1.TicketDelivery, withNS bool, now time.Time) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := &ds[i], &ds[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Spec.Object.Name != b.Spec.Object.Name {
			return a.Spec.Object.Name < b.Spec.Object.Name
		}
		return a.Spec.EnqueuedAt.Before(&b.Spec.EnqueuedAt)
	})
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if withNS {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "ID\tEVENT\tOBJECT\tENDPOINT\tSTATE\tATTEMPTS\tCODE\tNEXT\tTICKET\tAGE\tERROR")
	for _, d := range ds {
		if withNS {
			fmt.Fprintf(tw, "%s\t", d.Namespace)
		}
		state := string(d.Status.State)
		if state == "" {
			state = string(metalv1.TicketPending)
		}
		code, next, tkt := "-", "-", "-"
		if d.Status.ResponseCode != 0 {
			code = fmt.Sprint(d.Status.ResponseCode)
		}
		if n := d.Status.NextAttemptAt; n != nil && state == string(metalv1.TicketPending) {
			next = "now"
			if n.After(now) {
				next = "in " + duration.HumanDuration(n.Sub(now))
			}
		}
		if d.Status.TicketID != "" {
			tkt = d.Status.TicketID
		}
		msg := strings.Join(strings.Fields(d.Status.LastError), " ")
		if len(msg) > 72 {
			msg = msg[:69] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%s/%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Spec.EventType, d.Spec.Object.Kind, d.Spec.Object.Name,
			d.Spec.EndpointName, state, d.Status.Attempts, code, next, tkt, duration.HumanDuration(now.Sub(d.CreationTimestamp.Time)), msg)
	}
	tw.Flush()
}

func newTicketsRedeliverCommand(cc *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "redeliver ID",
		Short: "Send a ticket delivery again now (same webhook-id), whether it was delivered, refused or is waiting to retry",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := cc.client()
			if err != nil {
				return err
			}
			var d metalv1.TicketDelivery
			if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: args[0]}, &d); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("no ticket delivery %s in namespace %s (see anvil tickets list)", args[0], ns)
				}
				return err
			}
			if d.Status.State == metalv1.TicketSuperseded {
				return fmt.Errorf("ticket delivery %s was superseded (%s); there is nothing to send", d.Name, d.Status.LastError)
			}
			patch := client.MergeFrom(d.DeepCopy())
			if d.Annotations == nil {
				d.Annotations = map[string]string{}
			}
			d.Annotations[metalv1.AnnotationRedeliver] = time.Now().UTC().Format(time.RFC3339Nano)
			if err := c.Patch(cmd.Context(), &d, patch); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s of %s/%s to %s will be sent again (webhook-id %s); follow it with: anvil tickets list -n %s\n",
				d.Name, d.Spec.EventType, d.Spec.Object.Kind, d.Spec.Object.Name, d.Spec.EndpointName, d.Spec.WebhookID, d.Namespace)
			return nil
		},
	}
}
