package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/ops"
)

func newMachinesCommand() *cobra.Command {
	cc := &clientConfig{}
	cmd := &cobra.Command{Use: "machines", Short: "Create, list, upgrade and delete Machines (one node on one Host each)"}
	cc.bind(cmd.PersistentFlags())
	cmd.AddCommand(newMachinesListCommand(cc), newMachinesCreateCommand(cc), newMachinesDeleteCommand(cc), newMachinesUpgradeCommand(cc), newMachinesRetryUpgradeCommand(cc))
	return cmd
}

// machinesClient is clientConfig.client with watch support, which --wait needs.
func machinesClient(cc *clientConfig) (client.WithWatch, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = cc.Kubeconfig
	kc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	rc, err := kc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading kubeconfig: %w", err)
	}
	rc.UserAgent = "anvil-cli/" + version
	ns := cc.Namespace
	if ns == "" {
		if ns, _, err = kc.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	c, err := client.NewWithWatch(rc, client.Options{Scheme: newScheme()})
	return c, ns, err
}

// ---- list ----

type machinesListOptions struct {
	all        bool
	selector   string
	machineSet string
	output     string
}

func newMachinesListCommand(cc *clientConfig) *cobra.Command {
	o := &machinesListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List Machines with their phase, Host, Node and what they wait for",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains([]string{"", "wide", "json", "yaml"}, o.output) {
				return fmt.Errorf("unknown output format %q: use wide, json or yaml", o.output)
			}
			sel, err := labels.Parse(o.selector)
			if err != nil {
				return fmt.Errorf("invalid --selector %q: %w", o.selector, err)
			}
			if o.machineSet != "" {
				r, err := labels.NewRequirement(metalv1.LabelMachineSet, "=", []string{o.machineSet})
				if err != nil {
					return fmt.Errorf("invalid --machineset %q: %w", o.machineSet, err)
				}
				sel = sel.Add(*r)
			}
			c, ns, err := machinesClient(cc)
			if err != nil {
				return err
			}
			opts := []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}
			if !o.all {
				opts = append(opts, client.InNamespace(ns))
			}
			var list metalv1.MachineList
			if err := c.List(cmd.Context(), &list, opts...); err != nil {
				return fmt.Errorf("listing machines: %w", err)
			}
			sort.SliceStable(list.Items, func(i, j int) bool {
				a, b := list.Items[i], list.Items[j]
				return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
			})
			out := cmd.OutOrStdout()
			switch o.output {
			case "json", "yaml":
				return printMachinesData(out, list, o.output)
			}
			if len(list.Items) == 0 {
				where := "in namespace " + ns
				if o.all {
					where = "in any namespace"
				}
				if !sel.Empty() {
					where += " matching " + sel.String()
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "No Machines found %s.\n", where)
				return nil
			}
			printMachines(out, list.Items, o.all, o.output == "wide", time.Now())
			return nil
		},
	}
	cmd.Flags().BoolVarP(&o.all, "all-namespaces", "A", false, "list Machines in every namespace")
	cmd.Flags().StringVarP(&o.selector, "selector", "l", "", "label selector, e.g. metal.anvil.dev/machineset=workers")
	cmd.Flags().StringVar(&o.machineSet, "machineset", "", "only the Machines of this MachineSet")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "wide, json or yaml")
	return cmd
}

func printMachines(w io.Writer, ms []metalv1.Machine, withNS, wide bool, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	cols := []string{"NAME", "PHASE", "HOST", "NODE", "VERSION", "READY", "AGE"}
	if withNS {
		cols = append([]string{"NAMESPACE"}, cols...)
	}
	if wide {
		cols = append(cols, "CLASS", "PROVIDER-ID", "ADDRESSES", "TICKET")
	}
	cols = append(cols, "MESSAGE") // last: the only long column
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for i := range ms {
		m := &ms[i]
		row := []string{m.Name, orDash(string(m.Status.Phase)), orDash(machineHostName(m.Status.HostRef)), orDash(machineNodeName(m.Status.NodeRef)),
			machineVersionText(m), machineReadyText(m), duration.HumanDuration(now.Sub(m.CreationTimestamp.Time))}
		if withNS {
			row = append([]string{m.Namespace}, row...)
		}
		if wide {
			row = append(row, m.Spec.MachineClassRef.Name, orDash(m.Status.ProviderID), orDash(machineAddressesText(m.Status.Addresses)), hardwareRequestText(m.Status.HardwareRequest))
		}
		row = append(row, truncateMessage(machineMessage(m), 72))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

func printMachinesData(w io.Writer, list metalv1.MachineList, format string) error {
	list.APIVersion, list.Kind = metalv1.GroupVersion.String(), "MachineList"
	for i := range list.Items {
		list.Items[i].APIVersion, list.Items[i].Kind = metalv1.GroupVersion.String(), "Machine"
		list.Items[i].ManagedFields = nil // noise, as kubectl hides it
	}
	if list.Items == nil {
		list.Items = []metalv1.Machine{}
	}
	var b []byte
	var err error
	if format == "json" {
		b, err = json.MarshalIndent(list, "", "  ")
		b = append(b, '\n')
	} else {
		b, err = yaml.Marshal(list)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// machineMessage is the one thing worth reading about a Machine: its
// failure, what its deletion waits for, or its first False condition (the
// specific ones before the Ready summary).
func machineMessage(m *metalv1.Machine) string {
	s := &m.Status
	if s.FailureMessage != "" || s.FailureReason != "" {
		return machineFailureText(m)
	}
	if m.DeletionTimestamp != nil {
		if c := meta.FindStatusCondition(s.Conditions, metalv1.ConditionDeleting); c != nil {
			return c.Reason + ": " + oneLineMessage(c.Message)
		}
	}
	for _, ready := range []bool{false, true} {
		for _, c := range s.Conditions {
			if c.Status == metav1.ConditionFalse && c.Message != "" && (c.Type == metalv1.ConditionReady) == ready {
				return oneLineMessage(c.Message)
			}
		}
	}
	if s.Phase == metalv1.MachineWaitingForHardware && s.HardwareRequest != nil {
		return "waiting for hardware: ticket " + hardwareRequestText(s.HardwareRequest)
	}
	return ""
}

func machineVersionText(m *metalv1.Machine) string {
	if v := m.Status.Version; v != "" && v != m.Spec.Version {
		return v + "->" + m.Spec.Version // running one, asked for another
	}
	return m.Spec.Version
}

func machineReadyText(m *metalv1.Machine) string {
	if c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionReady); c != nil {
		return string(c.Status)
	}
	return "-"
}

func machineNodeName(r *corev1.ObjectReference) string {
	if r == nil {
		return ""
	}
	return r.Name
}

func truncateMessage(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}

// ---- create ----

type machineCreateOptions struct {
	name          string
	generateName  string
	class         string
	selector      string
	failureDomain string
	version       string
	wait          bool
	timeout       time.Duration
	watchTimeout  time.Duration
}

// validate checks everything that needs no API server.
func (o *machineCreateOptions) validate() error {
	var errs []string
	switch {
	case o.name == "" && o.generateName == "":
		errs = append(errs, "give the Machine a NAME or --generate-name PREFIX")
	case o.name != "" && o.generateName != "":
		errs = append(errs, "give either NAME or --generate-name, not both")
	case o.name != "":
		for _, e := range validation.IsDNS1123Subdomain(o.name) {
			errs = append(errs, fmt.Sprintf("invalid name %q: %s", o.name, e))
		}
	default:
		for _, e := range validation.IsDNS1123Subdomain(o.generateName + "xxxxx") {
			errs = append(errs, fmt.Sprintf("invalid --generate-name %q: %s", o.generateName, e))
		}
	}
	if o.class == "" {
		errs = append(errs, "--class is required: the MachineClass that says how to build the Machine (kubectl get machineclasses)")
	}
	if _, err := metav1.ParseToLabelSelector(o.selector); err != nil {
		errs = append(errs, fmt.Sprintf("invalid --selector %q: %v (use label selector syntax: k=v,k2!=v2,k3 in (a,b))", o.selector, err))
	}
	if o.failureDomain != "" {
		for _, e := range validation.IsValidLabelValue(o.failureDomain) {
			errs = append(errs, fmt.Sprintf("invalid --failure-domain %q: %s", o.failureDomain, e))
		}
	}
	if o.version != "" {
		if err := ops.ValidVersionFor("--version", o.version); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if o.timeout <= 0 {
		errs = append(errs, "--timeout must be positive")
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errors.New(errs[0])
	}
	return fmt.Errorf("%d problems:\n  %s", len(errs), strings.Join(errs, "\n  "))
}

// resolveVersion checks --version against the kubelets the class lists, or
// picks the newest of them when --version is not given.
func (o *machineCreateOptions) resolveVersion(class *metalv1.MachineClass) (v string, warning string, err error) {
	var listed []string
	for _, k := range class.Spec.Kubelets {
		listed = append(listed, k.Version)
	}
	sort.Slice(listed, func(i, j int) bool { return ops.VersionLess(listed[i], listed[j]) })
	switch {
	case o.version == "" && len(listed) == 0:
		return "", "", fmt.Errorf("--version is required: MachineClass %s lists no kubelets (spec.kubelets) to pick a default from", class.Name)
	case o.version == "":
		return listed[len(listed)-1], "", nil
	case len(listed) > 0 && !slices.Contains(listed, o.version):
		return "", "", fmt.Errorf("MachineClass %s has no kubelet %s (it lists %s): add it to the class's spec.kubelets or pick a listed version",
			class.Name, o.version, strings.Join(listed, ", "))
	case len(listed) == 0:
		return o.version, fmt.Sprintf("MachineClass %s lists no kubelets (spec.kubelets); the OS image must bring kubelet %s", class.Name, o.version), nil
	}
	return o.version, "", nil
}

func newMachinesCreateCommand(cc *clientConfig) *cobra.Command {
	o := &machineCreateOptions{}
	cmd := &cobra.Command{
		Use:   "create NAME|--generate-name PREFIX --class CLASS",
		Short: "Ask for a node: create a Machine, and with --wait follow it until it is Ready",
		Long: "Creates a Machine of a MachineClass. Anvil claims a free Host that matches --selector and\n" +
			"--failure-domain (or files a hardware request when none is free), PXE-boots it and waits for\n" +
			"its kubelet to join. With --wait every phase and condition change is printed as it happens;\n" +
			"the command exits 0 once the Machine is Ready, and non-zero with the reason when it fails or\n" +
			"the timeout passes. Ctrl-C stops waiting; the Machine is kept.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.name = args[0]
			}
			return runMachineCreate(cmd, cc, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.generateName, "generate-name", "", "name prefix; the API server appends a random suffix")
	f.StringVar(&o.class, "class", "", "MachineClass to build the Machine with (required)")
	f.StringVar(&o.selector, "selector", "", "label selector for the Hosts it may claim, e.g. metal.anvil.dev/rack=r1,gpu!=true")
	f.StringVar(&o.failureDomain, "failure-domain", "", "claim only Hosts labelled "+metalv1.LabelFailureDomain+"=FD")
	f.StringVar(&o.version, "version", "", "kubelet version like v1.37.2 (default: the newest the class lists)")
	f.BoolVar(&o.wait, "wait", false, "follow the Machine until it is Ready or Failed")
	f.DurationVar(&o.timeout, "timeout", 30*time.Minute, "how long --wait waits")
	f.DurationVar(&o.watchTimeout, "watch-timeout", 5*time.Minute, "end and re-establish each watch after this long")
	_ = f.MarkHidden("watch-timeout")
	return cmd
}

func runMachineCreate(cmd *cobra.Command, cc *clientConfig, o *machineCreateOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	ctx, out, errOut := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	c, ns, err := machinesClient(cc)
	if err != nil {
		return err
	}
	var class metalv1.MachineClass
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.class}, &class); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("MachineClass %q not found in namespace %s%s", o.class, ns, classesHint(ctx, c, ns))
		}
		return fmt.Errorf("reading MachineClass %s: %w", o.class, err)
	}
	v, warning, err := o.resolveVersion(&class)
	if err != nil {
		return err
	}
	if warning != "" {
		fmt.Fprintln(errOut, "warning:", warning)
	}
	if cond := meta.FindStatusCondition(class.Status.Conditions, metalv1.ConditionConfigValid); cond != nil && cond.Status == metav1.ConditionFalse {
		fmt.Fprintf(errOut, "warning: MachineClass %s has ConfigValid=False (%s: %s); its Machines cannot boot until it is fixed\n",
			class.Name, cond.Reason, oneLineMessage(cond.Message))
	}
	sel, _ := metav1.ParseToLabelSelector(o.selector) // validated above
	m := &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: o.name, GenerateName: o.generateName},
		Spec: metalv1.MachineSpec{
			MachineClassRef: metalv1.LocalObjectReference{Name: class.Name},
			HostSelector:    *sel,
			FailureDomain:   o.failureDomain,
			Version:         v,
		},
	}
	if err := c.Create(ctx, m); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("machine %s already exists in namespace %s (anvil machines list -n %s)", o.name, ns, ns)
		}
		return fmt.Errorf("creating machine: %w", err)
	}
	fmt.Fprintf(out, "machine/%s created in namespace %s (class %s, kubelet %s)\n", m.Name, ns, class.Name, v)
	if note := hostsNote(ctx, c, m); note != "" {
		fmt.Fprintln(errOut, note)
	}
	if !o.wait {
		return nil
	}
	return waitMachineReady(ctx, c, m, out, o.timeout, followOptions{WatchTimeout: o.watchTimeout})
}

// classesHint names the MachineClasses that do exist, for a not-found error.
func classesHint(ctx context.Context, c client.Client, ns string) string {
	var list metalv1.MachineClassList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return ""
	}
	if len(list.Items) == 0 {
		return "; there are no MachineClasses in it (see deploy/examples/machineclass-*.yaml)"
	}
	var names []string
	for _, mc := range list.Items {
		names = append(names, mc.Name)
	}
	sort.Strings(names)
	return "; it has: " + strings.Join(names, ", ")
}

// hostsNote says how many Hosts the new Machine could claim: none means it
// will wait for hardware. It is a hint only; errors (say, no RBAC to list
// Hosts) make it silent.
func hostsNote(ctx context.Context, c client.Client, m *metalv1.Machine) string {
	sel, err := metav1.LabelSelectorAsSelector(&m.Spec.HostSelector)
	if err != nil {
		return ""
	}
	if m.Spec.FailureDomain != "" {
		r, err := labels.NewRequirement(metalv1.LabelFailureDomain, "=", []string{m.Spec.FailureDomain})
		if err != nil {
			return ""
		}
		sel = sel.Add(*r)
	}
	var hosts metalv1.HostList
	if err := c.List(ctx, &hosts, client.InNamespace(m.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return ""
	}
	free := 0
	for _, h := range hosts.Items {
		if h.Status.State == metalv1.HostAvailable && h.Spec.ConsumerRef == nil {
			free++
		}
	}
	switch {
	case len(hosts.Items) == 0:
		return "note: no Host matches the selector and failure domain; the Machine waits for hardware (Anvil files a hardware request)"
	case free == 0:
		return fmt.Sprintf("note: %d Host(s) match, none is Available now; the Machine waits for one to be freed or for hardware", len(hosts.Items))
	}
	return fmt.Sprintf("note: %d of %d matching Host(s) are Available", free, len(hosts.Items))
}

// machineReady is the end of a successful create --wait.
func machineReady(m *metalv1.Machine) bool {
	return m.Status.Phase == metalv1.MachineRunning || meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionReady)
}

func waitMachineReady(parent context.Context, c client.WithWatch, m *metalv1.Machine, out io.Writer, timeout time.Duration, fo followOptions) error {
	ctx, cancel := context.WithTimeoutCause(parent, timeout, errWaitTimeout)
	defer cancel()
	d := newProgressDisplay(out, nil)
	fo.OnRetry = d.retried
	t := d.track(m.Name)
	stop := d.run()
	defer stop()
	err := followMachine(ctx, c, client.ObjectKeyFromObject(m), m, fo, func(cur *metalv1.Machine) (bool, error) {
		if cur == nil {
			t.gone()
			return true, fmt.Errorf("machine %s was deleted while waiting for it to become Ready", m.Name)
		}
		t.observe(cur)
		switch {
		case cur.Status.Phase == metalv1.MachineFailed:
			t.finish()
			return true, fmt.Errorf("machine %s failed after %s: %s", m.Name, elapsedText(time.Since(d.start)), machineFailureText(cur))
		case machineReady(cur):
			t.finish()
			stop()
			fmt.Fprintf(out, "machine/%s is Ready after %s: %s\n", m.Name, elapsedText(time.Since(d.start)), machineReadySummary(cur))
			return true, nil
		}
		return false, nil
	})
	stop()
	return machineWaitError(parent, ctx, err, func() error {
		return fmt.Errorf("timed out after %s waiting for machine %s to become Ready; it is %s", timeout, m.Name, t.stuck())
	}, func() error {
		return fmt.Errorf("stopped waiting (interrupted); machine %s was not deleted and is %s (anvil machines delete %s removes it)", m.Name, t.stuck(), m.Name)
	})
}

// waitError turns the end of a wait into the error to report: a timeout or
// an interruption (Ctrl-C) get their own messages.
func machineWaitError(parent, ctx context.Context, err error, timedOut, interrupted func() error) error {
	switch {
	case err == nil:
		return nil
	case parent.Err() != nil:
		return interrupted()
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), errWaitTimeout):
		return timedOut()
	}
	return err
}

func machineReadySummary(m *metalv1.Machine) string {
	parts := []string{"node " + orDash(machineNodeName(m.Status.NodeRef)), "host " + orDash(machineHostName(m.Status.HostRef))}
	if v := m.Status.Version; v != "" {
		parts = append(parts, "kubelet "+v)
	}
	if a := machineAddressesText(m.Status.Addresses); a != "" {
		parts = append(parts, a)
	}
	return strings.Join(parts, ", ")
}

// ---- delete ----

type machineDeleteOptions struct {
	wait         bool
	timeout      time.Duration
	watchTimeout time.Duration
}

func newMachinesDeleteCommand(cc *clientConfig) *cobra.Command {
	o := &machineDeleteOptions{}
	cmd := &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete Machines; their nodes are drained, their Hosts wiped and released",
		Long: "Deletes the named Machines. Anvil drains each node, wipes the disks (when the class says so)\n" +
			"and releases the Host. With --wait each step is printed until the Machines are gone.\n" +
			"A Machine of a MachineSet is replaced by the MachineSet; scale the MachineSet to remove capacity.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.timeout <= 0 {
				return errors.New("--timeout must be positive")
			}
			return runMachinesDelete(cmd, cc, o, args)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.wait, "wait", false, "follow the deletion (drain, wipe, release) until the Machines are gone")
	f.DurationVar(&o.timeout, "timeout", 30*time.Minute, "how long --wait waits")
	f.DurationVar(&o.watchTimeout, "watch-timeout", 5*time.Minute, "end and re-establish each watch after this long")
	_ = f.MarkHidden("watch-timeout")
	return cmd
}

func runMachinesDelete(cmd *cobra.Command, cc *clientConfig, o *machineDeleteOptions, names []string) error {
	ctx, out, errOut := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	c, ns, err := machinesClient(cc)
	if err != nil {
		return err
	}
	var errs []error
	var deleting []string
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		var m metalv1.Machine
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &m); err != nil {
			if apierrors.IsNotFound(err) {
				err = fmt.Errorf("machine %s not found in namespace %s", name, ns)
			}
			errs = append(errs, err)
			continue
		}
		if ms := m.Labels[metalv1.LabelMachineSet]; ms != "" {
			fmt.Fprintf(errOut, "note: machine %s belongs to MachineSet %s, which will create a replacement\n", name, ms)
		}
		if err := c.Delete(ctx, &m, client.Preconditions{UID: &m.UID}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting machine %s: %w", name, err))
			continue
		}
		fmt.Fprintf(out, "machine/%s deletion requested\n", name)
		deleting = append(deleting, name)
	}
	if o.wait && len(deleting) > 0 {
		errs = append(errs, waitMachinesGone(ctx, c, ns, deleting, out, o.timeout, followOptions{WatchTimeout: o.watchTimeout}))
	}
	return errors.Join(errs...)
}

func waitMachinesGone(parent context.Context, c client.WithWatch, ns string, names []string, out io.Writer, timeout time.Duration, fo followOptions) error {
	ctx, cancel := context.WithTimeoutCause(parent, timeout, errWaitTimeout)
	defer cancel()
	d := newProgressDisplay(out, names)
	fo.OnRetry = d.retried
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	trackers := make([]*machineTracker, len(names))
	for i, name := range names {
		trackers[i] = d.track(name)
	}
	stop := d.run()
	defer stop()
	for i, name := range names {
		t := trackers[i]
		wg.Go(func() {
			first := true
			err := followMachine(ctx, c, client.ObjectKey{Namespace: ns, Name: name}, nil, fo, func(cur *metalv1.Machine) (bool, error) {
				if cur == nil {
					t.gone()
					return true, nil
				}
				if first {
					t.baseline(cur)
					first = false
				}
				t.observe(cur)
				return false, nil
			})
			errs[i] = machineWaitError(parent, ctx, err, func() error {
				return fmt.Errorf("timed out after %s waiting for machine %s to be deleted; it is %s", timeout, name, t.stuck())
			}, func() error {
				return fmt.Errorf("stopped waiting (interrupted); deletion of machine %s goes on; it is %s", name, t.stuck())
			})
			if errs[i] == nil {
				d.message("machine/%s deleted after %s", name, elapsedText(time.Since(d.start)))
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
