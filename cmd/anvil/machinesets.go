package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/ops"
)

func newMachineSetsCommand() *cobra.Command {
	cc := &clientConfig{}
	cmd := &cobra.Command{Use: "machinesets", Short: "Roll kubelet versions through MachineSets and resume paused rollouts"}
	cc.bind(cmd.PersistentFlags())
	cmd.AddCommand(newMachineSetsUpgradeCommand(cc), newMachineSetsResumeCommand(cc))
	return cmd
}

// ---- upgrade ----

func newMachineSetsUpgradeCommand(cc *clientConfig) *cobra.Command {
	o := &upgradeOptions{}
	cmd := &cobra.Command{
		Use:   "upgrade NAME --version V",
		Short: "Roll a kubelet version through a MachineSet in place; with --watch follow the rollout",
		Long: "Sets the MachineSet's spec.template.spec.version. Anvil upgrades its Machines in place,\n" +
			"spec.strategy.maxUnavailable at a time, and pauses after spec.strategy.maxFailures failed\n" +
			"upgrades. With --watch a line is printed whenever a Machine's upgrade moves or the set's\n" +
			"counts change; the command exits 0 once every Machine runs the version and is Ready, and\n" +
			"non-zero when the rollout pauses (see anvil machinesets resume) or the timeout passes.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMachineSetUpgrade(cmd, cc, o, args[0])
		},
	}
	o.bind(cmd.Flags(), "follow the rollout until every Machine runs the version; exit non-zero when it pauses")
	return cmd
}

func runMachineSetUpgrade(cmd *cobra.Command, cc *clientConfig, o *upgradeOptions, name string) error {
	if err := o.validate(); err != nil {
		return err
	}
	ctx, out, errOut := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	c, ns, err := machinesClient(cc)
	if err != nil {
		return err
	}
	var events *eventFeed
	u, err := ops.UpgradeMachineSetWith(ctx, c, client.ObjectKey{Namespace: ns, Name: name}, o.version, func(ms *metalv1.MachineSet) {
		if o.watch {
			events = newEventFeed(ctx, c, ms)
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
		fmt.Fprintf(out, "follow it with: anvil machinesets upgrade %s --version %s --watch -n %s (or anvil machines list --machineset %s -n %s)\n",
			name, o.version, ns, name, ns)
		return nil
	}
	return watchSetRollout(ctx, c, u.Set, u.Members, o, events, out)
}

// setRollout is the state of one `machinesets upgrade --watch`.
type setRollout struct {
	c      client.WithWatch
	d      *progressDisplay
	o      *upgradeOptions
	name   string
	ns     string
	target string
	gen    int64 // the set's generation after the patch

	followCtx context.Context
	fo        followOptions
	wg        sync.WaitGroup
	trackers  map[string]*machineTracker

	lastCounts, lastPaused string
	lastMembers            []metalv1.Machine
	want                   int
}

func watchSetRollout(parent context.Context, c client.WithWatch, ms *metalv1.MachineSet, members []metalv1.Machine, o *upgradeOptions, events *eventFeed, out io.Writer) error {
	ctx, cancel := context.WithTimeoutCause(parent, o.timeout, errWaitTimeout)
	defer cancel()
	d := newProgressDisplay(out, nil) // follow sets the name column: every line names its Machine
	followCtx, stopFollowing := context.WithCancel(ctx)
	r := &setRollout{c: c, d: d, o: o, name: ms.Name, ns: ms.Namespace, target: o.version, gen: ms.Generation,
		followCtx: followCtx, fo: followOptions{WatchTimeout: o.watchTimeout, OnRetry: d.retried}, trackers: map[string]*machineTracker{}}
	stop := d.run()
	defer stop()
	for i := range members {
		r.follow(&members[i], true)
	}
	stopEvents := events.follow(ctx, o.pollInterval, func(l string) { r.setLine("%s", l) }, d.message)
	err := r.wait(ctx)
	switch {
	case err == nil || ctx.Err() == nil:
		r.settle(ctx)
	case parent.Err() == nil: // timed out: say where the Machines are now
		fctx, cancel := context.WithTimeout(context.WithoutCancel(parent), 5*time.Second)
		if members, err := ops.SetMachines(fctx, c, ms); err == nil {
			r.lastMembers = members
		}
		cancel()
	}
	stopFollowing()
	r.wg.Wait()
	stopEvents(parent.Err() == nil)
	stop()
	if err == nil {
		fmt.Fprintf(out, "machineset/%s: all %d Machines run kubelet %s and are Ready after %s\n", r.name, r.want, r.target, elapsedText(time.Since(d.start)))
	}
	return machineWaitError(parent, ctx, err, func() error {
		return fmt.Errorf("timed out after %s waiting for machineset %s to run kubelet %s: %s. The rollout goes on: anvil machinesets upgrade %s --version %s --watch -n %s follows it again",
			o.timeout, r.name, r.target, r.lagging(), r.name, r.target, r.ns)
	}, func() error {
		return fmt.Errorf("stopped watching (interrupted); the rollout of machineset %s goes on: %s", r.name, r.lagging())
	})
}

// wait checks the set every poll interval until the rollout ends.
func (r *setRollout) wait(ctx context.Context) error {
	tick := time.NewTicker(r.o.pollInterval)
	defer tick.Stop()
	for {
		done, err := r.check(ctx)
		switch {
		case done:
			return err
		case err != nil && watchFatal(ctx, err):
			return err
		case err != nil:
			r.d.retried(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// settle lets every follower print up to the state the last check read,
// so a Machine's last steps are not cut off when its watch lags behind the
// list that ended the rollout. Bounded: a follower that already saw a
// newer version never matches.
func (r *setRollout) settle(ctx context.Context) {
	deadline := time.Now().Add(3 * time.Second)
	for !r.caughtUp() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *setRollout) caughtUp() bool {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	for i := range r.lastMembers {
		m := &r.lastMembers[i]
		if t := r.trackers[m.Name]; t != nil && (t.prev == nil || t.prev.ResourceVersion != m.ResourceVersion) {
			return false
		}
	}
	return true
}

// follow watches one Machine of the set and prints its upgrade's steps.
// baseline: m is the state from before the patch, already known.
func (r *setRollout) follow(m *metalv1.Machine, baseline bool) {
	r.d.mu.Lock()
	r.d.nameWidth = max(r.d.nameWidth, len(m.Name))
	r.d.mu.Unlock()
	t := r.d.track(m.Name)
	r.trackers[m.Name] = t
	if baseline {
		t.baseline(upgradeView(m))
	}
	key := client.ObjectKeyFromObject(m)
	r.wg.Go(func() {
		err := followMachine(r.followCtx, r.c, key, nil, r.fo, func(cur *metalv1.Machine) (bool, error) {
			if cur == nil {
				t.gone()
				return true, nil
			}
			t.observe(upgradeView(cur))
			return false, nil
		})
		if err != nil && r.followCtx.Err() == nil {
			r.d.message("warning: following machine %s: %v", key.Name, err)
		}
	})
}

// upgradeView keeps what a rollout line is about: phase, upgrade, version,
// Ready, failure. The rest of a Machine's status would drown the rollout.
func upgradeView(m *metalv1.Machine) *metalv1.Machine {
	v := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		DeletionTimestamp: m.DeletionTimestamp}}
	s := &m.Status
	v.Status = metalv1.MachineStatus{Phase: s.Phase, Version: s.Version, Upgrade: s.Upgrade.DeepCopy(), FailureReason: s.FailureReason, FailureMessage: s.FailureMessage}
	if c := meta.FindStatusCondition(s.Conditions, metalv1.ConditionReady); c != nil {
		v.Status.Conditions = []metav1.Condition{*c}
	}
	return v
}

// setLine prints a line about the set as a whole.
func (r *setRollout) setLine(format string, args ...any) {
	r.d.message("%5s  %s", elapsedText(r.d.now().Sub(r.d.start)), fmt.Sprintf("machineset/%s  ", r.name)+fmt.Sprintf(format, args...))
}

// check reads the set and its Machines once: prints changed counts and
// the RolloutPaused condition, follows new Machines, and says whether the
// rollout is done (or paused: an error).
func (r *setRollout) check(ctx context.Context) (bool, error) {
	ms := &metalv1.MachineSet{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: r.name}, ms); err != nil {
		if apierrors.IsNotFound(err) {
			return true, fmt.Errorf("machineset %s was deleted while watching its rollout", r.name)
		}
		return false, fmt.Errorf("reading machineset %s: %w", r.name, err)
	}
	members, err := ops.SetMachines(ctx, r.c, ms)
	if err != nil {
		return false, err
	}
	if ms.Spec.Template.Spec.Version != r.target {
		return true, fmt.Errorf("spec.template.spec.version of machineset %s was changed to %s while watching", r.name, ms.Spec.Template.Spec.Version)
	}
	r.lastMembers, r.want = members, int(ptrOr(ms.Spec.Replicas, 1))
	for i := range members {
		if _, ok := r.trackers[members[i].Name]; !ok {
			r.follow(&members[i], false)
		}
	}
	st := &ms.Status
	s := fmt.Sprintf("%d Machines: %d updated, %d updating, %d failed", st.Replicas, st.UpToDateReplicas, st.UpdatingReplicas, st.FailedReplicas)
	upgradesFailed := 0 // failedReplicas counts Machines in phase Failed, not failed upgrades
	for i := range members {
		if ops.FailedUpgrade(&members[i]) {
			upgradesFailed++
		}
	}
	if upgradesFailed > 0 {
		s += fmt.Sprintf(", %d upgrades failed", upgradesFailed)
	}
	if s != r.lastCounts {
		r.setLine("%s", s)
		r.lastCounts = s
	}
	cond := meta.FindStatusCondition(st.Conditions, machine.ConditionRolloutPaused)
	paused := "RolloutPaused cleared"
	if cond != nil {
		paused = conditionLine(*cond)
		if cond.ObservedGeneration < r.gen {
			paused += " (not yet updated for this version)"
		}
	}
	if paused != r.lastPaused && (cond != nil || r.lastPaused != "") {
		r.setLine("%s", paused)
	}
	r.lastPaused = paused
	if cond != nil && cond.Status == metav1.ConditionTrue && cond.ObservedGeneration >= r.gen {
		return true, r.pausedError(cond)
	}
	active, done := 0, 0
	for i := range members {
		m := &members[i]
		if m.DeletionTimestamp != nil {
			continue
		}
		active++
		if setMemberDone(m, r.target) {
			done++
			if t := r.trackers[m.Name]; t != nil {
				t.finish()
			}
		}
	}
	return active == r.want && done == r.want, nil
}

func setMemberDone(m *metalv1.Machine, target string) bool {
	return m.Spec.Version == target && m.Status.Version == target && meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionReady)
}

func (r *setRollout) pausedError(cond *metav1.Condition) error {
	if cond.Reason == metalv1.ReasonInPlaceUpdateFail {
		return fmt.Errorf("the rollout of machineset %s to %s paused (%s): %s\n"+
			"  go on without the failed Machines: anvil machinesets resume %s -n %s\n"+
			"  or retry their upgrades:            anvil machinesets resume %s --retry-failed -n %s",
			r.name, r.target, cond.Reason, oneLineMessage(cond.Message), r.name, r.ns, r.name, r.ns)
	}
	return fmt.Errorf("the rollout of machineset %s to %s is paused (%s): %s; start it with: anvil machinesets resume %s -n %s",
		r.name, r.target, cond.Reason, oneLineMessage(cond.Message), r.name, r.ns)
}

// lagging says how far the rollout got and which Machines it waits for.
func (r *setRollout) lagging() string {
	done := 0
	var waiting []string
	for i := range r.lastMembers {
		m := &r.lastMembers[i]
		if m.DeletionTimestamp != nil {
			continue
		}
		if setMemberDone(m, r.target) {
			done++
			continue
		}
		s := m.Name + " ("
		switch up := m.Status.Upgrade; {
		case up != nil && up.Version == r.target && m.Spec.Version == r.target:
			s += "upgrade " + orDash(up.State)
			if up.PodsLeft > 0 {
				s += fmt.Sprintf(", %d pods left", up.PodsLeft)
			}
		case m.Spec.Version != r.target:
			s += "waiting its turn, on " + orDash(m.Status.Version)
		default:
			s += "runs " + orDash(m.Status.Version) + ", Ready=" + machineReadyText(m)
		}
		waiting = append(waiting, s+")")
	}
	msg := fmt.Sprintf("%d of %d Machines run it", done, r.want)
	if len(waiting) > 0 {
		msg += "; waiting for " + strings.Join(waiting, ", ")
	}
	return msg
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// ---- resume ----

func newMachineSetsResumeCommand(cc *clientConfig) *cobra.Command {
	var retryFailed bool
	cmd := &cobra.Command{
		Use:   "resume NAME",
		Short: "Go on with a paused rollout, without its failed Machines or retrying them",
		Long: "A rollout pauses after spec.strategy.maxFailures failed in-place upgrades, or when spec.paused\n" +
			"is set. resume clears spec.paused and lists the failed upgrade plans in the MachineSet's\n" +
			machine.AnnotationResumeRollout + " annotation: the rollout goes on and no longer counts\n" +
			"them; those Machines stay as they failed (Node cordoned). With --retry-failed the failed\n" +
			"Machines are annotated " + machine.AnnotationRetryUpgrade + "=<plan> instead, so Anvil upgrades them again.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := cc.client()
			if err != nil {
				return err
			}
			return ops.ResumeMachineSet(cmd.Context(), c, client.ObjectKey{Namespace: ns, Name: args[0]}, retryFailed, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&retryFailed, "retry-failed", false, "retry the failed Machines' upgrades instead of going on without them")
	return cmd
}
