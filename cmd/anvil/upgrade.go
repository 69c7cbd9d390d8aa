package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/ops"
)

// `anvil machines upgrade`: patch a Machine's kubelet version, and with
// --watch follow the in-place upgrade (validate, drain, the agent's
// download and restart, verify) until it ends.

// upgradeOptions are the flags of `machines upgrade` and `machinesets upgrade`.
type upgradeOptions struct {
	version      string
	watch        bool
	timeout      time.Duration
	watchTimeout time.Duration
	// pollInterval paces what is read rather than watched: Events, and a
	// MachineSet's status and members.
	pollInterval time.Duration
}

func (o *upgradeOptions) bind(f *pflag.FlagSet, watchHelp string) {
	f.StringVar(&o.version, "version", "", "kubelet version like v1.37.2 (required)")
	f.BoolVar(&o.watch, "watch", false, watchHelp)
	f.DurationVar(&o.timeout, "timeout", 60*time.Minute, "how long --watch waits")
	f.DurationVar(&o.watchTimeout, "watch-timeout", 5*time.Minute, "end and re-establish each watch after this long")
	f.DurationVar(&o.pollInterval, "poll-interval", 2*time.Second, "how often Events and MachineSet status are read")
	_ = f.MarkHidden("watch-timeout")
	_ = f.MarkHidden("poll-interval")
}

func (o *upgradeOptions) validate() error {
	var errs []string
	if err := ops.ValidVersionFor("--version", o.version); err != nil {
		errs = append(errs, err.Error())
	}
	if o.timeout <= 0 {
		errs = append(errs, "--timeout must be positive")
	}
	if o.pollInterval <= 0 {
		errs = append(errs, "--poll-interval must be positive")
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errors.New(errs[0])
	}
	return fmt.Errorf("%d problems:\n  %s", len(errs), strings.Join(errs, "\n  "))
}

func newMachinesUpgradeCommand(cc *clientConfig) *cobra.Command {
	o := &upgradeOptions{}
	cmd := &cobra.Command{
		Use:   "upgrade NAME --version V",
		Short: "Upgrade a Machine's kubelet in place; with --watch follow it to the end",
		Long: "Sets the Machine's spec.version. Anvil checks the version-skew rules, cordons and drains\n" +
			"the Node, hands the plan to the Host's agent (download, verify, restart the kubelet) and\n" +
			"verifies the Node, then uncordons it. With --watch every step is printed as it happens; the\n" +
			"command exits 0 once the Node runs the version, and non-zero with the reason when the upgrade\n" +
			"is rejected (nothing was touched), fails (the Node stays cordoned; the retry command is\n" +
			"printed) or the timeout passes. Ctrl-C stops watching; the upgrade goes on.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMachineUpgrade(cmd, cc, o, args[0])
		},
	}
	o.bind(cmd.Flags(), "follow the upgrade until it ends; exit non-zero when it is rejected or fails")
	return cmd
}

func runMachineUpgrade(cmd *cobra.Command, cc *clientConfig, o *upgradeOptions, name string) error {
	if err := o.validate(); err != nil {
		return err
	}
	ctx, out, errOut := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	c, ns, err := machinesClient(cc)
	if err != nil {
		return err
	}
	var events *eventFeed
	u, err := ops.UpgradeMachineWith(ctx, c, client.ObjectKey{Namespace: ns, Name: name}, o.version, func(m *metalv1.Machine) {
		if o.watch {
			// Events from before the patch belong to earlier upgrades: take them as seen.
			events = newEventFeed(ctx, c, m)
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, u.Message)
	if u.Note != "" {
		fmt.Fprintf(errOut, "note: %s\n", u.Note)
	}
	if !o.watch {
		fmt.Fprintf(out, "follow it with: anvil machines upgrade %s --version %s --watch -n %s (or kubectl describe machine %s -n %s)\n", name, o.version, ns, name, ns)
		return nil
	}
	return watchMachineUpgrade(ctx, c, u.Before, u.After, o, events, out)
}

func newMachinesRetryUpgradeCommand(cc *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "retry-upgrade NAME",
		Short: "Run a Machine's failed or rejected in-place upgrade again",
		Long: "Annotates the Machine " + machine.AnnotationRetryUpgrade + "=<status.upgrade.planID>: Anvil validates\n" +
			"the upgrade again and, if it passes, drains the Node and has the agent apply the kubelet anew.\n" +
			"Fix what made it fail first (the error of anvil machines upgrade --watch, or kubectl describe\n" +
			"machine, says what). Follow it with: anvil machines upgrade NAME --version V --watch.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := cc.client()
			if err != nil {
				return err
			}
			key := client.ObjectKey{Namespace: ns, Name: args[0]}
			msg, err := ops.RetryUpgrade(cmd.Context(), c, key)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			if m, err := ops.GetMachine(cmd.Context(), c, key); err == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "follow it with: anvil machines upgrade %s --version %s --watch -n %s\n", m.Name, m.Spec.Version, ns)
			}
			return nil
		},
	}
}

// upgradeOutcome says whether the upgrade of m to target has ended: done
// when its Node runs target, an error when it was rejected or failed. gen
// is the Machine's generation after the patch, so a verdict left from an
// earlier spec is not taken for this one.
func upgradeOutcome(m *metalv1.Machine, target string, gen int64) (bool, error) {
	s := &m.Status
	up := s.Upgrade
	upToDate := meta.FindStatusCondition(s.Conditions, metalv1.ConditionUpToDate)
	switch {
	case m.Spec.Version != target:
		return true, fmt.Errorf("spec.version of machine %s was changed to %s while watching (by a person or its MachineSet's rollout)", m.Name, m.Spec.Version)
	case s.Phase == metalv1.MachineFailed:
		return true, fmt.Errorf("machine %s failed: %s", m.Name, machineFailureText(m))
	case upToDate != nil && upToDate.Status == metav1.ConditionTrue && s.Version == target:
		return true, nil
	case up != nil && up.Version == target && up.State == metalv1.UpgradeRejected,
		upToDate != nil && upToDate.Status == metav1.ConditionFalse && upToDate.Reason == machine.ReasonUpgradeRejected &&
			upToDate.ObservedGeneration >= gen && (up == nil || up.Version == target):
		msg := ""
		if upToDate != nil && upToDate.Reason == machine.ReasonUpgradeRejected {
			msg = upToDate.Message
		} else if up != nil {
			msg = up.Message
		}
		err := fmt.Sprintf("the upgrade of machine %s to %s was rejected (%s): %s; nothing was touched",
			m.Name, target, machine.ReasonUpgradeRejected, orDash(oneLineMessage(msg)))
		if s.Version != "" {
			err += fmt.Sprintf(", its Node still runs %s. Set the version back with: anvil machines upgrade %s --version %s -n %s", s.Version, m.Name, s.Version, m.Namespace)
		}
		return true, errors.New(err)
	case up != nil && up.Version == target && up.State == metalv1.UpgradeFailed && m.Annotations[machine.AnnotationRetryUpgrade] != up.PlanID:
		return true, upgradeFailedError(m)
	}
	return false, nil
}

// upgradeFailedError names what failed and the command that retries it.
func upgradeFailedError(m *metalv1.Machine) error {
	up := m.Status.Upgrade
	reason := up.Message
	if c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionUpdating); reason == "" && c != nil {
		reason = c.Message
	}
	node := "the Node stays cordoned"
	if m.Spec.UncordonOnFailure {
		node = "the Node is uncordoned (spec.uncordonOnFailure)"
	}
	return fmt.Errorf("the in-place upgrade of machine %s from %s to %s failed (%s, plan %s): %s; %s.\nretry it with: %s",
		m.Name, orDash(up.FromVersion), up.Version, metalv1.ReasonInPlaceUpdateFail, up.PlanID, orDash(oneLineMessage(reason)), node, ops.RetryCommand(m))
}

func watchMachineUpgrade(parent context.Context, c client.WithWatch, before, patched *metalv1.Machine, o *upgradeOptions, events *eventFeed, out io.Writer) error {
	ctx, cancel := context.WithTimeoutCause(parent, o.timeout, errWaitTimeout)
	defer cancel()
	d := newProgressDisplay(out, nil)
	t := d.track(before.Name)
	t.baseline(before) // show what the upgrade changes, not the Machine's history
	stop := d.run()
	defer stop()
	stopEvents := events.follow(ctx, o.pollInterval, t.note, d.message)
	target, gen := o.version, patched.Generation
	ended := false
	err := followMachine(ctx, c, client.ObjectKeyFromObject(patched), patched, followOptions{WatchTimeout: o.watchTimeout, OnRetry: d.retried},
		func(cur *metalv1.Machine) (bool, error) {
			if cur == nil {
				t.gone()
				return true, fmt.Errorf("machine %s was deleted while watching its upgrade", before.Name)
			}
			t.observe(cur)
			done, err := upgradeOutcome(cur, target, gen)
			if done {
				t.finish()
				ended = err == nil
				if ended {
					patched = cur
				}
			}
			return done, err
		})
	stopEvents(parent.Err() == nil)
	stop()
	if ended {
		fmt.Fprintf(out, "machine/%s runs kubelet %s after %s: %s\n", before.Name, target, elapsedText(time.Since(d.start)), machineReadySummary(patched))
	}
	return machineWaitError(parent, ctx, err, func() error {
		return fmt.Errorf("timed out after %s waiting for machine %s to run kubelet %s; it is %s. The upgrade goes on: anvil machines upgrade %s --version %s --watch -n %s follows it again",
			o.timeout, before.Name, target, upgradeStuck(t, target), before.Name, target, before.Namespace)
	}, func() error {
		return fmt.Errorf("stopped watching (interrupted); the upgrade of machine %s goes on; it is %s", before.Name, upgradeStuck(t, target))
	})
}

// upgradeStuck says where the upgrade is, for timeout and interrupt messages.
func upgradeStuck(t *machineTracker, target string) string {
	t.d.mu.Lock()
	m := t.prev
	t.d.mu.Unlock()
	if m == nil || m.Status.Phase != metalv1.MachineRunning && m.Status.Phase != metalv1.MachineUpdating {
		return t.stuck()
	}
	up := m.Status.Upgrade
	if up == nil || up.Version != target {
		return fmt.Sprintf("%s, its Node on kubelet %s, and no upgrade to %s has started (is anvil serve running?)", m.Status.Phase, orDash(m.Status.Version), target)
	}
	s := "in upgrade state " + orDash(up.State)
	if up.PodsLeft > 0 {
		s += fmt.Sprintf(" (%d pods left)", up.PodsLeft)
	}
	if msg := up.Progress(); msg != "" {
		s += ": " + oneLineMessage(msg)
	}
	return s
}

// note prints a line about the Machine that is not a change of its own
// status (an Event).
func (t *machineTracker) note(text string) {
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	t.d.lineLocked(t, text)
}

// ---- Events ----

// eventFeed reads the upgrade Events of one object (the controllers'
// events.k8s.io Events, read as core/v1 by involvedObject.uid) and yields
// each once. It polls: Events add detail to the status, which is watched.
type eventFeed struct {
	c    client.Client
	ns   string
	uid  types.UID
	seen map[string]bool
	err  error // listing failed for good (no RBAC): the feed is off
}

// newEventFeed takes the object's present Events as already seen.
func newEventFeed(ctx context.Context, c client.Client, obj client.Object) *eventFeed {
	f := &eventFeed{c: c, ns: obj.GetNamespace(), uid: obj.GetUID(), seen: map[string]bool{}}
	_, f.err = f.poll(ctx)
	return f
}

// upgradeEventReasons are the reasons of machine/upgrade.go and rollout.go;
// every such Event also carries the action Upgrade.
var upgradeEventReasons = []string{metalv1.ReasonInPlaceUpdating, metalv1.ReasonInPlaceUpdateFail, machine.ReasonUpgradeRejected,
	"DrainSkipped", "PlanPublished", "Upgraded", machine.ReasonRolloutStep}

// poll returns the lines of the upgrade Events not seen before, oldest first.
func (f *eventFeed) poll(ctx context.Context) ([]string, error) {
	var list corev1.EventList
	if err := f.c.List(ctx, &list, client.InNamespace(f.ns), client.MatchingFields{"involvedObject.uid": string(f.uid)}); err != nil {
		return nil, err
	}
	sort.SliceStable(list.Items, func(i, j int) bool { return eventTime(&list.Items[i]).Before(eventTime(&list.Items[j])) })
	var lines []string
	for i := range list.Items {
		e := &list.Items[i]
		if f.seen[e.Name] {
			continue
		}
		f.seen[e.Name] = true
		if e.Action != "Upgrade" && !slices.Contains(upgradeEventReasons, e.Reason) {
			continue
		}
		lines = append(lines, fmt.Sprintf("event %s %s: %s", e.Type, e.Reason, oneLineMessage(e.Message)))
	}
	return lines, nil
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// follow polls until the returned stop is called, and hands each new
// Event line to line; a failed read is reported through warn once. stop
// reads one last time when final is set (Events trail the status).
func (f *eventFeed) follow(ctx context.Context, every time.Duration, line func(string), warn func(string, ...any)) (stop func(final bool)) {
	if f == nil || f.err != nil {
		if f != nil && !apierrors.IsForbidden(f.err) {
			warn("warning: cannot read Events (%v); showing the status only", f.err)
		}
		return func(bool) {}
	}
	var mu sync.Mutex // poll is not reentrant
	pollOnce := func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		lines, err := f.poll(ctx)
		for _, l := range lines {
			line(l)
		}
		return err
	}
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(every)
		defer tick.Stop()
		failures, warned := 0, false
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				err := pollOnce(ctx)
				switch {
				case err == nil:
					failures = 0
				case ctx.Err() == nil && !warned:
					// One failed read is not worth a line (near the
					// deadline the client's rate limiter refuses to wait).
					if failures++; failures >= 3 {
						warn("warning: reading Events: %v; retrying", err)
						warned = true
					}
				}
			}
		}
	}()
	var once sync.Once
	return func(final bool) {
		once.Do(func() {
			close(quit)
			<-finished
			if final {
				fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				_ = pollOnce(fctx)
			}
		})
	}
}
