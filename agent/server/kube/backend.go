// Package kube implements server.Backend on the Kubernetes API: Hosts are
// found by UID through a field index of the informer cache, reports land in
// Host.status.agent and Host.status.hardware, upgrade plans come from the
// Host's Machine (status.upgrade in state Applying) and its MachineClass
// (spec.kubelets), and results go to Machine.status.upgrade.agentResult
// (the Machine controller turns them into status.upgrade.state). A Host in
// state Deprovisioning gets a wipe action; its result becomes the Host
// condition Wiped. WatchEvents lets the Backend wake held long polls
// (server.ActionWaiter) when a Host, its Machine or a MachineClass changes.
package kube

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"anvil.dev/anvil/inventory/reread"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/server"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/statusapply"
	"anvil.dev/anvil/pxe/index"
)

// RBAC of the agent API (read Hosts, Machines, MachineClasses from the
// cache; patch the status of Hosts and Machines).
//
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts;machines;machineclasses,verbs=get;list;watch,roleName=anvil-pxe
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts/status;machines/status,verbs=patch,roleName=anvil-pxe

// IndexHostUID is the field index of Hosts by metadata.uid.
const IndexHostUID = "agent.anvil.dev/host-uid"

// ConditionWiped is set on a Host when its agent reports a wipe.
const (
	ConditionWiped   = metalv1.ConditionWiped
	ReasonWiped      = "Wiped"
	ReasonWipeFailed = metalv1.ReasonWipeFailed
)

// AddIndexes registers IndexHostUID with the manager's field indexer
// (mgr.GetFieldIndexer()). Call once per manager before it starts.
func AddIndexes(ctx context.Context, idx client.FieldIndexer) error {
	return idx.IndexField(ctx, &metalv1.Host{}, IndexHostUID, func(o client.Object) []string {
		return []string{string(o.GetUID())}
	})
}

// Options configure a Backend.
type Options struct {
	// Client reads from the informer cache (with IndexHostUID registered)
	// and writes to the API server: a manager's GetClient().
	Client client.Client
	// APIReader reads past the cache when a write hit a conflict
	// (mgr.GetAPIReader()); Client is used if nil.
	APIReader client.Reader
	// Now returns the current time (time.Now if nil).
	Now func() time.Time
	// Logger for events worth an operator's attention.
	Logger logr.Logger
	// Reread looks past the cache when a presented credential does not
	// match the cached Host (RefreshHost), at most once per Host per
	// interval. Nil: one is made when APIReader is set.
	Reread *reread.Rereader
	// Registerer receives anvil_credential_cache_misses_total (shared with
	// the config endpoint); nil keeps it private.
	Registerer prometheus.Registerer
	// LastSeenRefresh: a report that would change nothing in the Host's
	// status but status.agent.lastSeen is written only when the stored
	// lastSeen is this old (default 1h; negative: every report writes).
	// The agent reports every 10 minutes; writing each one cost 8 Host
	// writes a second at 5,000 hosts, each waking the Host's watchers.
	LastSeenRefresh time.Duration
	// ProgressInterval: an upgrade's progress phases are written to its
	// Machine at most this often; a phase that comes sooner is held (the
	// newest wins) and written when the interval ends. Outcomes are
	// written at once. Default DefaultProgressInterval; negative: every
	// phase is written.
	ProgressInterval time.Duration
}

// Backend implements server.Backend.
type Backend struct {
	opts    Options
	misses  *prometheus.CounterVec
	skipped prometheus.Counter
	watch   actionWatch // WatchActions, fed by WatchEvents
	// progress holds upgrade phases that come sooner than ProgressInterval.
	progress *progressThrottle
	own      ownWrites // the agent API's last Machine writes, until the cache has them
}

var (
	_ server.Backend       = (*Backend)(nil)
	_ server.HostRefresher = (*Backend)(nil)
)

// New returns a Backend.
func New(opts Options) (*Backend, error) {
	if opts.Client == nil {
		return nil, errors.New("agent kube backend: Client is required")
	}
	if opts.Reread == nil && opts.APIReader != nil {
		r, err := reread.New(reread.Options{APIReader: opts.APIReader, Now: opts.Now})
		if err != nil {
			return nil, err
		}
		opts.Reread = r
	}
	if opts.APIReader == nil {
		opts.APIReader = opts.Client
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LastSeenRefresh == 0 {
		opts.LastSeenRefresh = time.Hour
	}
	if opts.ProgressInterval == 0 {
		opts.ProgressInterval = DefaultProgressInterval
	}
	skipped := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "anvil_agent_reports_unwritten_total",
		Help: "Agent reports not written to the Host because they changed nothing but lastSeen, which was recent (refreshed hourly).",
	})
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(skipped); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			skipped = are.ExistingCollector.(prometheus.Counter)
		}
	}
	b := &Backend{opts: opts, misses: reread.MissCounter(opts.Registerer), skipped: skipped}
	b.progress = newProgressThrottle(opts.ProgressInterval, b.writeHeldProgress)
	return b, nil
}

// RefreshHost implements server.HostRefresher: the Host (found in the cache
// by Host) as the API server has it, re-read at most once per interval.
func (b *Backend) RefreshHost(ctx context.Context, host server.HostInfo, credentialHash string) (server.HostInfo, error) {
	count := func(o string) { b.misses.WithLabelValues("agent", o).Inc() }
	if b.opts.Reread == nil {
		return host, nil // nothing to look past the cache with
	}
	key := client.ObjectKey{Namespace: host.Namespace, Name: host.Name}
	cached := &metalv1.Host{}
	if err := b.opts.Client.Get(ctx, key, cached); err != nil || string(cached.UID) != host.UID {
		count(reread.MissUnknownHost)
		return server.HostInfo{}, server.ErrUnknownHost
	}
	h, recent, err := b.opts.Reread.Get(ctx, key, cached.ResourceVersion)
	if err != nil {
		count(reread.MissError)
		return server.HostInfo{}, fmt.Errorf("re-reading host %s: %w", host, err)
	}
	if h == nil || string(h.UID) != host.UID {
		count(reread.MissNotFound)
		return server.HostInfo{}, server.ErrUnknownHost
	}
	info := server.HostInfo{Namespace: h.Namespace, Name: h.Name, UID: string(h.UID)}
	if h.Status.Agent != nil {
		info.CredentialHash = h.Status.Agent.CredentialHash
	}
	switch {
	case info.CredentialHash == "" || subtle.ConstantTimeCompare([]byte(info.CredentialHash), []byte(credentialHash)) != 1:
		count(reread.MissNotFound)
	case recent:
		count(reread.MissFoundRecent)
	default:
		count(reread.MissFoundAPI)
	}
	return info, nil
}

// Host finds the Host with the UID through the cache index.
func (b *Backend) Host(ctx context.Context, uid string) (server.HostInfo, error) {
	var list metalv1.HostList
	// Every agent request starts here, so no deep copy: only fields are
	// read from the cache's object, and nothing is kept.
	if err := b.opts.Client.List(ctx, &list, client.MatchingFields{IndexHostUID: uid}, client.UnsafeDisableDeepCopy); err != nil {
		return server.HostInfo{}, fmt.Errorf("looking up host by UID: %w", err)
	}
	if len(list.Items) != 1 {
		return server.HostInfo{}, server.ErrUnknownHost
	}
	h := &list.Items[0]
	info := server.HostInfo{Namespace: h.Namespace, Name: h.Name, UID: string(h.UID)}
	if h.Status.Agent != nil {
		info.CredentialHash = h.Status.Agent.CredentialHash
	}
	return info, nil
}

// Report writes status.agent (all but the credential hash) and the
// agent-observed part of status.hardware with a JSON merge patch, so
// fields written by others (BMC facts, the credential hash) stay. A report
// that changes nothing but lastSeen is not written while the cached
// lastSeen is younger than LastSeenRefresh.
func (b *Backend) Report(ctx context.Context, host server.HostInfo, r agent.Report) error {
	now := metav1.NewTime(b.opts.Now().UTC().Truncate(time.Second))
	ag := map[string]any{
		"version":        r.AgentVersion,
		"bootID":         r.BootID,
		"lastSeen":       now,
		"kubeletVersion": nullIfEmpty(r.KubeletVersion),
	}
	hw := map[string]any{}
	if r.CPU.Model != "" {
		hw["cpuModel"] = r.CPU.Model
	}
	if r.CPU.Count > 0 {
		hw["cpuCount"] = r.CPU.Count
	}
	if r.MemoryMiB > 0 {
		hw["memoryMiB"] = r.MemoryMiB
	}
	if macs := r.MACs(); len(macs) > 0 {
		hw["macs"] = macs
	}
	if r.Kernel != "" {
		hw["kernel"] = r.Kernel
	}
	if len(r.Disks) > 0 {
		hw["disks"] = r.Disks // same JSON shape as metalv1.Disk
	}
	if len(r.NICs) > 0 {
		hw["nics"] = r.NICs // same JSON shape as metalv1.NIC
	}
	status := map[string]any{"agent": ag}
	if len(hw) > 0 {
		status["hardware"] = hw
	}
	if b.reportUnchanged(ctx, host, status, now) {
		b.skipped.Inc()
		return nil
	}
	live, err := b.host(ctx, host)
	if err != nil {
		live = &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: host.Namespace, Name: host.Name}}
	}
	if ag["kubeletVersion"] == nil {
		delete(ag, "kubeletVersion")
	}
	// Facts this report lacks keep the value the agent reported before
	// (as they did with a merge patch): an apply leaving them out would
	// remove them.
	if prev := live.Status.Hardware; prev != nil {
		for k, v := range map[string]any{"cpuModel": prev.CPUModel, "cpuCount": prev.CPUCount, "memoryMiB": prev.MemoryMiB,
			"macs": prev.MACs, "kernel": prev.Kernel, "disks": prev.Disks, "nics": prev.NICs} {
			if _, ok := hw[k]; !ok && statusapply.OwnedBy(live, statusapply.AgentReport.Manager, statusapply.Path("hardware", k)) {
				hw[k] = v
			}
		}
		if len(hw) > 0 {
			status["hardware"] = hw
		}
	}
	if _, err := statusapply.AgentReport.Apply(ctx, b.opts.Client, statusapply.Request{Live: live, GVK: statusapply.HostGVK, Status: status}); err != nil {
		if apierrors.IsNotFound(err) {
			return server.ErrUnknownHost
		}
		return fmt.Errorf("patching host %s status: %w", host, err)
	}
	return nil
}

// reportUnchanged reports whether the status patch would change nothing in
// the cached Host but lastSeen, and the cached lastSeen is recent.
func (b *Backend) reportUnchanged(ctx context.Context, host server.HostInfo, status map[string]any, now metav1.Time) bool {
	if b.opts.LastSeenRefresh < 0 {
		return false
	}
	h, err := b.host(ctx, host)
	if err != nil || h.Status.Agent == nil || h.Status.Agent.LastSeen == nil ||
		now.Sub(h.Status.Agent.LastSeen.Time) >= b.opts.LastSeenRefresh {
		return false
	}
	cur, err1 := jsonValue(h.Status)
	want, err2 := jsonValue(status)
	if err1 != nil || err2 != nil {
		return false
	}
	wm := want.(map[string]any)
	delete(wm["agent"].(map[string]any), "lastSeen")
	return !mergeChanges(cur, wm)
}

// jsonValue is v as encoding/json decodes it into an any.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

// mergeChanges reports whether the JSON merge patch (RFC 7386) patch would
// change doc.
func mergeChanges(doc any, patch map[string]any) bool {
	dm, ok := doc.(map[string]any)
	if !ok {
		return true
	}
	for k, pv := range patch {
		dv, present := dm[k]
		switch pv := pv.(type) {
		case nil:
			if present {
				return true
			}
		case map[string]any:
			if !present || mergeChanges(dv, pv) {
				return true
			}
		default:
			if !present || !reflect.DeepEqual(dv, pv) {
				return true
			}
		}
	}
	return false
}

// NextAction: wipe while the Host is Deprovisioning (until a Wiped
// condition is recorded for its current generation), else the upgrade
// plan of its Machine while that is Applying, else none.
func (b *Backend) NextAction(ctx context.Context, host server.HostInfo) (agent.Action, error) {
	h, err := b.host(ctx, host)
	if err != nil {
		return agent.Action{}, err
	}
	if h.Status.State == metalv1.HostDeprovisioning {
		if c := meta.FindStatusCondition(h.Status.Conditions, ConditionWiped); c == nil || c.ObservedGeneration != h.Generation {
			return agent.Action{Type: agent.ActionWipe, ID: wipeID(h)}, nil
		}
		return agent.Action{Type: agent.ActionNone}, nil
	}
	m, err := b.machine(ctx, h, b.opts.Client)
	if err != nil || m == nil {
		return agent.Action{Type: agent.ActionNone}, err
	}
	up := m.Status.Upgrade
	if up == nil || up.State != metalv1.UpgradeApplying || up.PlanID == "" || agentDone(up) {
		// A plan whose outcome is recorded is over for the agent, even
		// before the Machine controller has moved the state on.
		return agent.Action{Type: agent.ActionNone}, nil
	}
	mc := &metalv1.MachineClass{}
	if err := b.opts.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.MachineClassRef.Name}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			b.opts.Logger.Info("upgrade plan without a MachineClass; nothing to offer", "machine", client.ObjectKeyFromObject(m), "class", m.Spec.MachineClassRef.Name)
			return agent.Action{Type: agent.ActionNone}, nil
		}
		return agent.Action{}, fmt.Errorf("reading MachineClass: %w", err)
	}
	var art *metalv1.KubeletArtifact
	for i := range mc.Spec.Kubelets {
		if mc.Spec.Kubelets[i].Version == up.Version {
			art = &mc.Spec.Kubelets[i]
		}
	}
	if art == nil {
		b.opts.Logger.Info("upgrade plan for a kubelet version the MachineClass does not list; nothing to offer",
			"machine", client.ObjectKeyFromObject(m), "version", up.Version)
		return agent.Action{Type: agent.ActionNone}, nil
	}
	// The boot HTTP server serves every kubelet of a class (a relative one
	// from the artifact directory, an http(s) one from its cache) at the
	// path the Ignition config used too: hosts need no other route out.
	plan := &agent.UpgradePlan{PlanID: up.PlanID, Version: up.Version, SHA256: art.SHA256,
		URL: index.ArtifactURLPrefix + index.KubeletPath(client.ObjectKeyFromObject(mc), *art)}
	if t := mc.Spec.Upgrade.HealthCheckTimeout; t != nil && t.Duration > 0 {
		plan.HealthCheckTimeoutSeconds = int64(t.Duration / time.Second)
	}
	return agent.Action{Type: agent.ActionUpgrade, ID: up.PlanID, Upgrade: plan}, nil
}

// ActionResult records progress and outcomes. Stale plans get
// ErrStaleAction; repeating a recorded outcome is a no-op.
func (b *Backend) ActionResult(ctx context.Context, host server.HostInfo, id string, r agent.Result) error {
	switch r.Type {
	case agent.ActionWipe:
		return b.wipeResult(ctx, host, id, r)
	case agent.ActionUpgrade:
		return b.upgradeResult(ctx, host, id, r)
	}
	return server.Errorf("unknown action type")
}

// upgradeResult records the agent's report in status.upgrade.agentResult,
// the agent API's only Machine field (statusapply.AgentUpgrade). As when
// it wrote the state itself, a report is recorded only while the plan is
// Applying (the apply has the resourceVersion it read as precondition) and
// the first outcome stands; the Machine controller moves the state. A
// progress phase may be held and written later (progressThrottle); whether
// the plan is stale is still answered at once, from the same checks.
func (b *Backend) upgradeResult(ctx context.Context, host server.HostInfo, id string, r agent.Result) error {
	reader := client.Reader(b.opts.Client)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h, err := b.host(ctx, host)
		if err != nil {
			return err
		}
		m, err := b.machine(ctx, h, reader)
		cached := reader == client.Reader(b.opts.Client)
		// After a first conflict, read past the cache.
		reader = b.opts.APIReader
		if err != nil {
			return err
		}
		if m == nil || m.Status.Upgrade == nil || m.Status.Upgrade.PlanID != id {
			return server.ErrStaleAction
		}
		if cached {
			b.own.catchUp(m)
		}
		up := m.Status.Upgrade
		if up.State != metalv1.UpgradeApplying || agentDone(up) {
			// Already recorded, or the controller has moved on.
			return nil
		}
		res := metalv1.AgentUpgradeResult{PlanID: up.PlanID, ReportedAt: *ptrTime(b.opts.Now())}
		switch r.Result {
		case agent.InProgress:
			res.Outcome, res.Message = metalv1.AgentUpgradeInProgress, string(r.Phase)
			if ar := up.AgentResult; ar != nil && ar.PlanID == up.PlanID && ar.Outcome == res.Outcome && ar.Message == res.Message {
				return nil
			}
			if b.progress.hold(client.ObjectKeyFromObject(m), progressReport{host: host, planID: id, result: r}) {
				return nil
			}
		case agent.Succeeded, agent.Failed:
			res.Outcome, res.Message = metalv1.AgentUpgradeSucceeded, r.Reason
			if r.Result == agent.Failed {
				res.Outcome = metalv1.AgentUpgradeFailed
			}
			b.progress.drop(client.ObjectKeyFromObject(m))
		default:
			return server.Errorf("unknown result %q", r.Result)
		}
		u, err := statusapply.AgentUpgrade.Apply(ctx, b.opts.Client, statusapply.Request{
			Live: m, GVK: statusapply.MachineGVK, ResourceVersion: m.ResourceVersion,
			Status: map[string]any{"upgrade": map[string]any{"agentResult": res}},
		})
		if apierrors.IsNotFound(err) {
			return server.ErrStaleAction
		}
		if err == nil {
			b.own.wrote(m, u.GetResourceVersion(), res)
		}
		return err
	})
}

// agentDone reports whether the agent's outcome of the current plan is
// recorded.
func agentDone(up *metalv1.UpgradeStatus) bool {
	ar := up.AgentResult
	return ar != nil && ar.PlanID == up.PlanID && ar.Outcome != metalv1.AgentUpgradeInProgress
}

func (b *Backend) wipeResult(ctx context.Context, host server.HostInfo, id string, r agent.Result) error {
	if !strings.HasPrefix(id, "wipe-") {
		return server.ErrUnknownAction
	}
	if r.Result == agent.InProgress {
		return nil
	}
	reader := client.Reader(b.opts.Client)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h := &metalv1.Host{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: host.Namespace, Name: host.Name}, h); err != nil {
			if apierrors.IsNotFound(err) {
				return server.ErrUnknownHost
			}
			return err
		}
		reader = b.opts.APIReader
		if h.UID != types.UID(host.UID) {
			return server.ErrUnknownHost
		}
		if h.Status.State != metalv1.HostDeprovisioning {
			if meta.FindStatusCondition(h.Status.Conditions, ConditionWiped) != nil {
				return nil // recorded; the Host controller has moved on
			}
			return server.ErrStaleAction
		}
		cond := metav1.Condition{Type: ConditionWiped, ObservedGeneration: h.Generation}
		if r.Result == agent.Succeeded {
			cond.Status, cond.Reason = metav1.ConditionTrue, ReasonWiped
			cond.Message = nonEmpty(r.Reason, "the agent erased the partition tables and signatures of the disks")
		} else {
			cond.Status, cond.Reason = metav1.ConditionFalse, ReasonWipeFailed
			cond.Message = nonEmpty(r.Reason, "the agent reported a failure without a reason")
		}
		if c := meta.FindStatusCondition(h.Status.Conditions, ConditionWiped); c != nil &&
			c.ObservedGeneration == cond.ObservedGeneration && c.Status == cond.Status && c.Message == cond.Message {
			return nil
		}
		orig := h.DeepCopy()
		meta.SetStatusCondition(&h.Status.Conditions, cond)
		// The resourceVersion it was decided on: a Host that left
		// Deprovisioning since must not get this generation's result.
		_, err := statusapply.AgentWipe.Apply(ctx, b.opts.Client, statusapply.Request{
			Live: orig, GVK: statusapply.HostGVK, ResourceVersion: orig.ResourceVersion,
			Status: map[string]any{"conditions": []metav1.Condition{*meta.FindStatusCondition(h.Status.Conditions, ConditionWiped)}},
		})
		return err
	})
}

// host reads the Host from the cache and checks it is still the one the
// credential was issued for.
func (b *Backend) host(ctx context.Context, info server.HostInfo) (*metalv1.Host, error) {
	h := &metalv1.Host{}
	if err := b.opts.Client.Get(ctx, client.ObjectKey{Namespace: info.Namespace, Name: info.Name}, h); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, server.ErrUnknownHost
		}
		return nil, err
	}
	if string(h.UID) != info.UID {
		return nil, server.ErrUnknownHost
	}
	return h, nil
}

// machine returns the Machine holding h, or nil if none does.
func (b *Backend) machine(ctx context.Context, h *metalv1.Host, r client.Reader) (*metalv1.Machine, error) {
	ref := h.Spec.ConsumerRef
	if ref == nil || ref.Name == "" || (ref.Kind != "" && ref.Kind != "Machine") {
		return nil, nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = h.Namespace
	}
	m := &metalv1.Machine{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading Machine: %w", err)
	}
	if ref.UID != "" && ref.UID != m.UID {
		return nil, nil // a namesake; the claim belongs to a deleted Machine
	}
	return m, nil
}

var _ server.ActionWaiter = (*Backend)(nil)

// actionWatch is the state behind WatchActions: one channel per Host with
// waiters, shared by them, closed and forgotten on an event that may
// change what NextAction answers for that Host.
type actionWatch struct {
	mu       sync.Mutex
	watching bool // WatchEvents was called and its context is not done
	waiters  map[types.NamespacedName]chan struct{}
	// consumers maps a Machine to the Hosts whose spec.consumerRef names
	// it (what NextAction follows), and consumerOf is the reverse, so a
	// Machine event wakes its Host even before status.hostRef is set.
	consumers  map[types.NamespacedName]map[types.NamespacedName]struct{}
	consumerOf map[types.NamespacedName]types.NamespacedName
}

// WatchActions implements server.ActionWaiter. ok is false until WatchEvents
// was called, and again once its context is done.
func (b *Backend) WatchActions(host server.HostInfo) (<-chan struct{}, bool) {
	w := &b.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.watching {
		return nil, false
	}
	k := types.NamespacedName{Namespace: host.Namespace, Name: host.Name}
	ch, ok := w.waiters[k]
	if !ok {
		ch = make(chan struct{})
		w.waiters[k] = ch
	}
	return ch, true
}

// WatchEvents makes WatchActions work: it adds event handlers to the
// informers of inf (the manager's cache, which NextAction reads through
// Options.Client) for everything NextAction reads. A Host event wakes that
// Host; a Machine event the Host in its status.hostRef and the Hosts whose
// consumerRef names it; a MachineClass event (rare: an admin's edit) every
// waiter, as finding the Hosts of a class's Machines costs more than a few
// extra cache reads. Call it once, before or after the cache starts; when
// ctx is done, waiters are woken and WatchActions answers ok=false.
func (b *Backend) WatchEvents(ctx context.Context, inf cache.Informers) error {
	w := &b.watch
	w.mu.Lock()
	already := w.waiters != nil
	if !already {
		w.waiters = map[types.NamespacedName]chan struct{}{}
		w.consumers = map[types.NamespacedName]map[types.NamespacedName]struct{}{}
		w.consumerOf = map[types.NamespacedName]types.NamespacedName{}
	}
	w.mu.Unlock()
	if already {
		return errors.New("agent kube backend: WatchEvents called twice")
	}
	handlers := []struct {
		obj client.Object
		on  func(o any, deleted bool)
	}{
		{&metalv1.Host{}, w.hostEvent},
		{&metalv1.Machine{}, w.machineEvent},
		{&metalv1.MachineClass{}, func(any, bool) { w.wakeAll() }},
	}
	for _, h := range handlers {
		i, err := inf.GetInformer(ctx, h.obj)
		if err != nil {
			return fmt.Errorf("watching %T for the agent API: %w", h.obj, err)
		}
		on := h.on
		_, err = i.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(o any) { on(o, false) },
			UpdateFunc: func(old, o any) {
				oo, ok1 := old.(client.Object)
				no, ok2 := o.(client.Object)
				if ok1 && ok2 && oo.GetResourceVersion() == no.GetResourceVersion() {
					return // a resync: nothing changed
				}
				on(old, false) // a Machine's old hostRef, a Host's old consumerRef
				on(o, false)
			},
			DeleteFunc: func(o any) { on(o, true) },
		})
		if err != nil {
			return fmt.Errorf("watching %T for the agent API: %w", h.obj, err)
		}
	}
	w.mu.Lock()
	w.watching = true
	w.mu.Unlock()
	go func() {
		<-ctx.Done()
		w.mu.Lock()
		w.watching = false
		w.mu.Unlock()
		w.wakeAll()
	}()
	return nil
}

// eventObject is the object of an informer event, unwrapping a tombstone.
func eventObject[T client.Object](o any) (T, bool) {
	if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	t, ok := o.(T)
	return t, ok
}

func (w *actionWatch) hostEvent(o any, deleted bool) {
	h, ok := eventObject[*metalv1.Host](o)
	if !ok {
		return
	}
	k := client.ObjectKeyFromObject(h)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wakeLocked(k)
	if old, ok := w.consumerOf[k]; ok {
		delete(w.consumers[old], k)
		if len(w.consumers[old]) == 0 {
			delete(w.consumers, old)
		}
		delete(w.consumerOf, k)
	}
	ref := h.Spec.ConsumerRef
	if deleted || ref == nil || ref.Name == "" || (ref.Kind != "" && ref.Kind != "Machine") {
		return
	}
	mk := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
	if mk.Namespace == "" {
		mk.Namespace = h.Namespace // as Backend.machine reads it
	}
	if w.consumers[mk] == nil {
		w.consumers[mk] = map[types.NamespacedName]struct{}{}
	}
	w.consumers[mk][k] = struct{}{}
	w.consumerOf[k] = mk
}

func (w *actionWatch) machineEvent(o any, _ bool) {
	m, ok := eventObject[*metalv1.Machine](o)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ref := m.Status.HostRef; ref != nil && ref.Name != "" {
		w.wakeLocked(types.NamespacedName{Namespace: m.Namespace, Name: ref.Name})
	}
	for hk := range w.consumers[client.ObjectKeyFromObject(m)] {
		w.wakeLocked(hk)
	}
}

func (w *actionWatch) wakeLocked(k types.NamespacedName) {
	if ch, ok := w.waiters[k]; ok {
		close(ch)
		delete(w.waiters, k)
	}
}

func (w *actionWatch) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, ch := range w.waiters {
		close(ch)
		delete(w.waiters, k)
	}
}

// wipeID names the wipe of one deprovisioning: it changes with the Host's
// generation, so a later deprovisioning is a new action for the agent.
func wipeID(h *metalv1.Host) string {
	return "wipe-" + strconv.FormatInt(h.Generation, 10)
}

// credentialManager is the field manager of status.agent.credentialHash,
// shared with boot/hoststore (FieldManager there), which issues the agent
// credential in the same write that consumes the boot credential.
const credentialManager = "anvil-bootcred"

// IssueCredential mints a new agent credential for h and stores its hash
// in h's status, replacing (and so revoking) any previous one. The
// plaintext is returned once, for the host's rendered config.
func IssueCredential(ctx context.Context, c client.Client, h *metalv1.Host, rand io.Reader) (string, error) {
	cred, hash, err := agent.NewCredential(rand, string(h.UID))
	if err != nil {
		return "", err
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"agent": map[string]any{"credentialHash": hash}}})
	if err := c.Status().Patch(ctx, h, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(credentialManager)); err != nil {
		return "", fmt.Errorf("storing agent credential hash of host %s/%s: %w", h.Namespace, h.Name, err)
	}
	return cred, nil
}

// RevokeCredential removes the stored hash; every agent request of the
// Host is refused afterwards.
func RevokeCredential(ctx context.Context, c client.Client, h *metalv1.Host) error {
	patch := []byte(`{"status":{"agent":{"credentialHash":null}}}`)
	if err := c.Status().Patch(ctx, h, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(credentialManager)); err != nil {
		return fmt.Errorf("revoking agent credential of host %s/%s: %w", h.Namespace, h.Name, err)
	}
	return nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t.UTC().Truncate(time.Second))
	return &mt
}
