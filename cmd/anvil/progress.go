package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/ops"
)

// The live display of `anvil machines create --wait` and `delete --wait`:
// a watch on each Machine, one printed line per change, and on a terminal a
// status line that is redrawn in place. Without a terminal (CI logs) only
// whole lines are written, never cursor movements.

// followOptions tune followMachine.
type followOptions struct {
	// WatchTimeout asks the API server to end each watch after this long;
	// followMachine then re-establishes it from the last resourceVersion.
	// Servers and proxies end long watches anyway; this keeps it regular.
	WatchTimeout time.Duration
	// OnWatch is called each time a watch is established.
	OnWatch func()
	// OnRetry reports a failed read or watch before the next attempt.
	OnRetry func(error)
}

// followMachine calls fn with the Machine as it is (initial, when given,
// else read from the API server) and again after every change, until fn
// returns done or an error, or ctx ends. fn(nil) means the Machine is gone
// (deleted, or replaced by another object of the same name). client-go's
// RetryWatcher watches from the last resourceVersion seen and
// re-establishes a watch that ends (bookmarks included), so no change is
// missed; when that version is too old (410 Gone) it starts again from a
// fresh read.
func followMachine(ctx context.Context, c client.WithWatch, key client.ObjectKey, initial *metalv1.Machine,
	o followOptions, fn func(*metalv1.Machine) (bool, error)) error {
	var rv string
	var uid types.UID
	deliver := func(m *metalv1.Machine) (bool, error) {
		if m != nil && uid != "" && m.UID != uid {
			m = nil // the one we followed was deleted and the name reused
		}
		if m == nil {
			_, err := fn(nil)
			return true, err
		}
		uid, rv = m.UID, m.ResourceVersion
		return fn(m)
	}
	if initial != nil {
		if done, err := deliver(initial); done || err != nil {
			return err
		}
	}
	var delay time.Duration
	for {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		if rv == "" {
			var m metalv1.Machine
			err := c.Get(ctx, key, &m)
			switch {
			case apierrors.IsNotFound(err):
				_, err := deliver(nil)
				return err
			case err != nil:
				if watchFatal(ctx, err) {
					return err
				}
				if o.OnRetry != nil {
					o.OnRetry(fmt.Errorf("reading machine %s: %w", key.Name, err))
				}
				delay = min(max(2*delay, 500*time.Millisecond), 10*time.Second)
				continue
			}
			if done, err := deliver(&m); done || err != nil {
				return err
			}
		}
		done, err := watchMachine(ctx, c, key, rv, o, deliver)
		switch {
		case done || ctx.Err() != nil:
			if ctx.Err() != nil && err == nil {
				err = ctx.Err()
			}
			return err
		case watchExpired(err):
			rv, delay = "", 0 // too old to resume: read afresh at once
		default:
			return err
		}
	}
}

// watchMachine follows one Machine from resourceVersion rv with a
// RetryWatcher until deliver says done, the version expires (an error
// watchExpired knows) or an error that retrying cannot fix.
func watchMachine(ctx context.Context, c client.WithWatch, key client.ObjectKey, rv string, o followOptions,
	deliver func(*metalv1.Machine) (bool, error)) (bool, error) {
	// The RetryWatcher retries every failed watch call; the wrapper below
	// stops it (with the cause) on those it must not retry.
	wctx, stop := context.WithCancelCause(klog.NewContext(ctx, logr.Discard()))
	defer stop(nil)
	selector := fields.OneTermEqualSelector("metadata.name", key.Name)
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		if o.WatchTimeout > 0 {
			secs := int64(max(o.WatchTimeout/time.Second, 1))
			opts.TimeoutSeconds = &secs
		}
		w, err := c.Watch(ctx, &metalv1.MachineList{}, &client.ListOptions{Namespace: key.Namespace, FieldSelector: selector, Raw: &opts})
		switch {
		case err == nil:
			if o.OnWatch != nil {
				o.OnWatch()
			}
		case watchExpired(err) || watchFatal(ctx, err):
			stop(err)
		case o.OnRetry != nil:
			o.OnRetry(fmt.Errorf("watching machine %s: %w", key.Name, err))
		}
		return w, err
	}}
	rw, err := watchtools.NewRetryWatcherWithContext(wctx, rv, lw)
	if err != nil {
		return false, err
	}
	defer func() {
		rw.Stop()
		<-rw.Done()
	}()
	for {
		select {
		case <-wctx.Done():
			return false, stopCause(ctx, wctx)
		case ev, ok := <-rw.ResultChan():
			if !ok {
				return false, stopCause(ctx, wctx)
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				m, ok := ev.Object.(*metalv1.Machine)
				if !ok {
					return false, fmt.Errorf("watch returned %T, not a Machine", ev.Object)
				}
				if done, err := deliver(m); done || err != nil {
					return true, err
				}
			case watch.Deleted:
				_, err := deliver(nil)
				return true, err
			case watch.Error:
				return false, apierrors.FromObject(ev.Object)
			}
		}
	}
}

// stopCause is why a RetryWatcher ended: the caller's context, or the
// error that stopped it.
func stopCause(ctx, wctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := context.Cause(wctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return errors.New("the watch ended")
}

func watchExpired(err error) bool { return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) }

// watchFatal is true for errors that retrying cannot fix.
func watchFatal(ctx context.Context, err error) bool {
	return ctx.Err() != nil || apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) ||
		meta.IsNoMatchError(err) || apierrors.IsBadRequest(err)
}

// progressDisplay prints the changes of one or more Machines.
type progressDisplay struct {
	mu        sync.Mutex
	out       io.Writer
	tty       bool
	width     int           // terminal columns (TTY only)
	heartbeat time.Duration // without a TTY: a "still waiting" line after this long without output
	nameWidth int           // > 0: lines carry the Machine's name in a column this wide
	start     time.Time
	now       func() time.Time

	trackers   []*machineTracker
	statusUp   bool // a status line is drawn and must be cleared first
	lastOutput time.Time
}

// newProgressDisplay writes to out, redrawing a status line only when out
// is a terminal. names are the Machines it will show; with more than one,
// every line names its Machine.
func newProgressDisplay(out io.Writer, names []string) *progressDisplay {
	d := &progressDisplay{out: out, heartbeat: 5 * time.Minute, start: time.Now(), now: time.Now}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb" {
		d.tty, d.width = true, 80
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 20 {
			d.width = w
		}
	}
	if len(names) > 1 {
		for _, n := range names {
			d.nameWidth = max(d.nameWidth, len(n))
		}
	}
	d.lastOutput = d.start
	return d
}

// track starts showing one Machine.
func (d *progressDisplay) track(name string) *machineTracker {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := &machineTracker{d: d, name: name, phaseSince: d.now()}
	d.trackers = append(d.trackers, t)
	return t
}

// run redraws the status line (TTY) or writes heartbeats (no TTY) until
// the returned stop is called; stop also clears the status line.
func (d *progressDisplay) run() (stop func()) {
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				d.refresh()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-finished
			d.mu.Lock()
			d.clearStatusLocked()
			d.mu.Unlock()
		})
	}
}

func (d *progressDisplay) refresh() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tty {
		d.drawStatusLocked()
		return
	}
	if d.heartbeat <= 0 || d.now().Sub(d.lastOutput) < d.heartbeat {
		return
	}
	for _, t := range d.trackers {
		if !t.finished {
			d.lineLocked(t, "still waiting: "+t.blocker())
		}
	}
}

// message prints a line that belongs to no Machine's table (a summary).
func (d *progressDisplay) message(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clearStatusLocked()
	fmt.Fprintf(d.out, format+"\n", args...)
	d.lastOutput = d.now()
	d.drawStatusLocked()
}

// retried reports a failed read or watch that followMachine retries.
func (d *progressDisplay) retried(err error) { d.message("warning: %v; retrying", err) }

func (d *progressDisplay) lineLocked(t *machineTracker, text string) {
	d.clearStatusLocked()
	fmt.Fprintln(d.out, d.formatLocked(t, text))
	d.lastOutput = d.now()
	d.drawStatusLocked()
}

func (d *progressDisplay) formatLocked(t *machineTracker, text string) string {
	name := ""
	if d.nameWidth > 0 {
		name = fmt.Sprintf("%-*s  ", d.nameWidth, t.name)
	}
	return fmt.Sprintf("%5s  %s%-18s  %s", elapsedText(d.now().Sub(d.start)), name, orDash(t.phase), text)
}

func (d *progressDisplay) clearStatusLocked() {
	if d.statusUp {
		fmt.Fprint(d.out, "\r\033[K")
		d.statusUp = false
	}
}

func (d *progressDisplay) drawStatusLocked() {
	if !d.tty {
		return
	}
	var parts []string
	for _, t := range d.trackers {
		if t.finished {
			continue
		}
		s := t.blocker()
		if len(d.trackers) > 1 {
			s = t.name + ": " + orDash(t.phase)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		d.clearStatusLocked()
		return
	}
	line := fmt.Sprintf("%5s  waiting  %s", elapsedText(d.now().Sub(d.start)), strings.Join(parts, " | "))
	if len(d.trackers) == 1 {
		line = d.formatLocked(d.trackers[0], "waiting: "+parts[0])
	}
	if r := []rune(line); len(r) > d.width-1 {
		line = string(r[:d.width-4]) + "..."
	}
	fmt.Fprint(d.out, "\r\033[K"+line)
	d.statusUp = true
}

// machineTracker is one Machine in a progressDisplay.
type machineTracker struct {
	d          *progressDisplay
	name       string
	prev       *metalv1.Machine
	phase      string
	phaseSince time.Time
	finished   bool
}

// observe prints what changed since the last observed version.
func (t *machineTracker) observe(m *metalv1.Machine) {
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	lines := machineChanges(t.prev, m)
	if p := string(m.Status.Phase); p != t.phase {
		if len(lines) == 0 && t.prev != nil {
			lines = []string{fmt.Sprintf("phase %s -> %s", orDash(t.phase), orDash(p))}
		}
		t.phase, t.phaseSince = p, d.now()
	}
	t.prev = m.DeepCopy()
	for _, l := range lines {
		d.lineLocked(t, l)
	}
	if len(lines) == 0 {
		d.drawStatusLocked()
	}
}

// gone prints that the Machine no longer exists.
func (t *machineTracker) gone() {
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	t.finished = true // first, so the status line drops it
	t.d.lineLocked(t, "deleted")
}

// baseline takes m as already shown, except for its deletion: delete
// --wait shows what the deletion does, not the Machine's history.
func (t *machineTracker) baseline(m *metalv1.Machine) {
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	b := m.DeepCopy()
	b.DeletionTimestamp = nil
	meta.RemoveStatusCondition(&b.Status.Conditions, metalv1.ConditionDeleting)
	t.prev, t.phase = b, string(b.Status.Phase)
}

// finish stops showing the Machine in the status line.
func (t *machineTracker) finish() {
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	t.finished = true
}

// blocker says what the Machine waits for, from the last version seen.
func (t *machineTracker) blocker() string {
	if t.prev == nil {
		return "no status read yet"
	}
	return machineBlocker(t.prev)
}

// stuck says where the Machine is and for how long, for timeout and
// interrupt messages.
func (t *machineTracker) stuck() string {
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	since := elapsedText(t.d.now().Sub(t.phaseSince))
	if p := t.prev; t.phase == "" && (p == nil || len(p.Status.Conditions) == 0 && p.DeletionTimestamp == nil) {
		return "still without status after " + since + ": no controller has picked it up (is anvil serve running?)"
	}
	return fmt.Sprintf("in phase %s for %s: %s", orDash(t.phase), since, t.blocker())
}

// machineChanges lists what changed between two versions of a Machine, one
// readable line each. old is nil for the first version seen.
func machineChanges(old, cur *metalv1.Machine) []string {
	if old == nil {
		old = &metalv1.Machine{}
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	ost, cs := &old.Status, &cur.Status

	if old.DeletionTimestamp == nil && cur.DeletionTimestamp != nil {
		add("deletion requested")
	}
	if h := machineHostName(cs.HostRef); h != machineHostName(ost.HostRef) {
		if h == "" {
			add("host %s released", machineHostName(ost.HostRef))
		} else {
			add("host %s claimed", h)
		}
	}
	if hr, ohr := cs.HardwareRequest, ost.HardwareRequest; hr != nil {
		switch {
		case ohr == nil || ohr.ID != hr.ID || ohr.URL != hr.URL:
			add("hardware request %s", hardwareRequestText(hr))
		case ohr.State != hr.State:
			add("hardware request %s: %s -> %s", orDash(hr.ID), orDash(ohr.State), orDash(hr.State))
		}
		if hr.LastError != "" && (ohr == nil || ohr.LastError != hr.LastError) {
			add("hardware request error: %s", oneLineMessage(hr.LastError))
		}
	}
	if b := cs.Boot; b != nil && b.Attempt > 1 && (ost.Boot == nil || ost.Boot.RequestID != b.RequestID) {
		add("network boot retried (%s, attempt %d)", orDash(b.Purpose), b.Attempt)
	}
	if n := machineNodeName(cs.NodeRef); n != machineNodeName(ost.NodeRef) && n != "" {
		s := "node " + n + " registered"
		if a := machineAddressesText(cs.Addresses); a != "" {
			s += " (" + a + ")"
		}
		add("%s", s)
	}
	if cs.Version != "" && cs.Version != ost.Version {
		add("node reports kubelet %s", cs.Version)
	}
	for _, c := range cs.Conditions {
		o := meta.FindStatusCondition(ost.Conditions, c.Type)
		if o != nil && o.Status == c.Status && o.Reason == c.Reason && o.Message == c.Message {
			continue
		}
		add("%s", conditionLine(c))
	}
	if u := cs.Upgrade; u != nil {
		ou := ost.Upgrade
		if ou == nil || ou.PlanID != u.PlanID || ou.State != u.State || ou.Progress() != u.Progress() || ou.PodsLeft != u.PodsLeft {
			s := fmt.Sprintf("upgrade %s -> %s: %s", orDash(u.FromVersion), u.Version, orDash(u.State))
			if u.PodsLeft > 0 {
				s += fmt.Sprintf(" (%d pods left)", u.PodsLeft)
			}
			if msg := u.Progress(); msg != "" {
				s += ": " + oneLineMessage(msg)
			}
			add("%s", s)
		}
	}
	if (cs.FailureReason != "" || cs.FailureMessage != "") && (cs.FailureReason != ost.FailureReason || cs.FailureMessage != ost.FailureMessage) {
		add("failed: %s", machineFailureText(cur))
	}
	for _, f := range old.Finalizers {
		if !slices.Contains(cur.Finalizers, f) {
			add("finalizer %s removed", f)
		}
	}
	return out
}

// machineBlocker says in one line what a Machine is waiting for.
func machineBlocker(m *metalv1.Machine) string {
	s := &m.Status
	if m.DeletionTimestamp != nil {
		if c := meta.FindStatusCondition(s.Conditions, metalv1.ConditionDeleting); c != nil {
			return conditionLine(*c)
		}
		if len(m.Finalizers) > 0 {
			return "waiting for finalizer " + strings.Join(m.Finalizers, ", ") + " to be removed (is anvil serve running?)"
		}
		return "being deleted"
	}
	if s.FailureReason != "" || s.FailureMessage != "" {
		return "failed: " + machineFailureText(m)
	}
	if s.Phase == "" && len(s.Conditions) == 0 {
		return "no status yet: no controller has picked the Machine up (is anvil serve running?)"
	}
	if s.Phase == metalv1.MachineWaitingForHardware && s.HardwareRequest != nil {
		return "waiting for hardware: " + hardwareRequestText(s.HardwareRequest)
	}
	for _, t := range []string{metalv1.ConditionInfrastructureReady, metalv1.ConditionNodeReady, metalv1.ConditionReady} {
		if c := meta.FindStatusCondition(s.Conditions, t); c != nil && c.Status != metav1.ConditionTrue {
			return conditionLine(*c)
		}
	}
	for _, c := range s.Conditions {
		if c.Status == metav1.ConditionFalse {
			return conditionLine(c)
		}
	}
	return "phase " + orDash(string(s.Phase))
}

func conditionLine(c metav1.Condition) string { return ops.ConditionLine(c) }

func machineFailureText(m *metalv1.Machine) string { return ops.MachineFailureText(m) }

func hardwareRequestText(hr *metalv1.HardwareRequest) string {
	if hr == nil {
		return "-"
	}
	s := orDash(hr.ID)
	if hr.State != "" {
		s += " (" + string(hr.State) + ")"
	}
	if hr.URL != "" {
		s += " " + hr.URL
	}
	return s
}

func machineHostName(r *metalv1.LocalObjectReference) string {
	if r == nil {
		return ""
	}
	return r.Name
}

func machineAddressesText(as []metalv1.MachineAddress) string {
	var s []string
	for _, a := range as {
		s = append(s, a.Address)
	}
	return strings.Join(s, ",")
}

// oneLine keeps a message on one line and drops control characters, so a
// message cannot break the table or move a terminal's cursor.
func oneLineMessage(s string) string { return ops.OneLine(s) }

// shortDuration is 12s, 4m05s or 2h03m: elapsed times in a fixed width.
func elapsedText(d time.Duration) string {
	d = max(d, 0).Truncate(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// errWaitTimeout is the cause of a --wait that ran out of time.
var errWaitTimeout = errors.New("timed out")
