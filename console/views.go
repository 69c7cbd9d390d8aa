package console

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/machine"
)

// The view models: what each page shows, computed from the session's
// store with pure functions (views_test.go tables them).

// health is how a tile is marked.
type health string

const (
	healthOK    health = "ok"    // nothing wrong
	healthBusy  health = "busy"  // Anvil is acting on it (booting, draining, powering)
	healthWait  health = "wait"  // waiting for a person (a manual power action)
	healthError health = "error" // a condition is False for a reason an admin must fix
)

// problemConditions are the Host conditions whose False status needs an
// admin. PowerSynced is judged by its reason: Powering is only a change
// in progress.
var problemConditions = []string{metalv1.ConditionValid, metalv1.ConditionBMCReachable, metalv1.ConditionConfigRendered,
	metalv1.ConditionWiped, metalv1.ConditionInstalled}

// hostHealth says how a Host's tile is marked and why.
func hostHealth(h *metalv1.Host) (health, string) {
	var why []string
	for _, t := range problemConditions {
		if c := meta.FindStatusCondition(h.Status.Conditions, t); c != nil && c.Status == metav1.ConditionFalse {
			why = append(why, condLine(c))
		}
	}
	if c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionPowerSynced); c != nil && c.Status == metav1.ConditionFalse {
		switch c.Reason {
		case inventory.ReasonPowering:
		case inventory.ReasonManualActionRequired:
			if len(why) == 0 {
				return healthWait, condLine(c)
			}
		default:
			why = append(why, condLine(c))
		}
	}
	if len(why) > 0 {
		return healthError, strings.Join(why, "; ")
	}
	if h.Status.State == metalv1.HostError {
		return healthError, "state Error (see the Host's conditions and Events)"
	}
	switch h.Status.State {
	case metalv1.HostRegistering, metalv1.HostClaimed, metalv1.HostProvisioning, metalv1.HostDeprovisioning:
		return healthBusy, string(h.Status.State)
	}
	if h.Status.IssuedPowerAction != nil {
		return healthBusy, "power " + string(h.Status.IssuedPowerAction.Action) + " sent"
	}
	return healthOK, ""
}

func condLine(c *metav1.Condition) string {
	s := c.Type + "=" + string(c.Status) + " " + c.Reason
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// tile is one Host in a rack.
type tile struct {
	ID, Name, Namespace, URL string
	State, Power             string
	Machine, Node, Kubelet   string
	Health                   health
	Reason                   string
}

// rack is one rack's tiles (a region of the racks page).
type rack struct {
	ID, Name, FailureDomain string
	Tiles                   []tile
	Problems                int
}

func hostURL(ns, name string) string {
	return "/hosts/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
}

func domID(prefix string, parts ...string) string {
	return prefix + "-" + strings.Join(parts, "--")
}

// machineIndex finds the Machine on a Host (its consumerRef).
type machineIndex map[string]*metalv1.Machine

func indexMachines(ms []*metalv1.Machine) machineIndex {
	idx := machineIndex{}
	for _, m := range ms {
		idx[m.Namespace+"/"+m.Name] = m
	}
	return idx
}

func (idx machineIndex) on(h *metalv1.Host) *metalv1.Machine {
	if r := h.Spec.ConsumerRef; r != nil && r.Kind == "Machine" {
		return idx[h.Namespace+"/"+r.Name]
	}
	return nil
}

func hostTile(h *metalv1.Host, m *metalv1.Machine) tile {
	t := tile{ID: domID("h", h.Namespace, h.Name), Name: h.Name, Namespace: h.Namespace, URL: hostURL(h.Namespace, h.Name),
		State: orDash(string(h.Status.State)), Power: orDash(string(h.Status.PowerState))}
	if a := h.Status.Agent; a != nil {
		t.Kubelet = a.KubeletVersion
	}
	if r := h.Spec.ConsumerRef; r != nil {
		t.Machine = r.Name
	}
	if m != nil {
		if m.Status.NodeRef != nil {
			t.Node = m.Status.NodeRef.Name
		}
		if m.Status.Version != "" {
			t.Kubelet = m.Status.Version
		}
	}
	t.Health, t.Reason = hostHealth(h)
	return t
}

// rackFilter narrows the racks page, server side.
type rackFilter struct {
	Query    string // substring of the Host, Machine, Node or rack name
	Problems bool   // only Hosts marked error or waiting
	Page     int    // 1-based
}

func (f rackFilter) match(t tile, rackName string) bool {
	if f.Problems && t.Health != healthError && t.Health != healthWait {
		return false
	}
	if q := f.Query; q != "" { // lower-cased by groupRacks
		for _, s := range []string{t.Name, t.Machine, t.Node, rackName} {
			if strings.Contains(strings.ToLower(s), q) {
				return true
			}
		}
		return false
	}
	return true
}

// rackPage is one page of racks.
type rackPage struct {
	Racks                  []rack
	Page, Pages            int
	Hosts, Shown, Problems int
}

const noRack = "(no rack)"

// groupRacks groups Hosts into racks (by failure domain, then rack), keeps
// what the filter matches and cuts whole racks into pages of about
// pageSize tiles, so the browser never holds thousands of tiles at once.
func groupRacks(hosts []*metalv1.Host, idx machineIndex, f rackFilter, pageSize int) rackPage {
	f.Query = strings.ToLower(f.Query) // once, not per tile
	byKey := map[string]*rack{}
	var keys []string
	p := rackPage{Hosts: len(hosts)}
	for _, h := range hosts {
		name := h.Labels[metalv1.LabelRack]
		if name == "" {
			name = noRack
		}
		fd := h.Labels[metalv1.LabelFailureDomain]
		t := hostTile(h, idx.on(h))
		if t.Health == healthError {
			p.Problems++
		}
		if !f.match(t, name) {
			continue
		}
		key := fd + "\x00" + name
		r := byKey[key]
		if r == nil {
			r = &rack{ID: domID("rack", fd, name), Name: name, FailureDomain: fd}
			byKey[key] = r
			keys = append(keys, key)
		}
		r.Tiles = append(r.Tiles, t)
		if t.Health == healthError {
			r.Problems++
		}
	}
	sort.Strings(keys)
	var pages [][]rack
	n := 0
	for _, k := range keys {
		r := *byKey[k]
		p.Shown += len(r.Tiles)
		if len(pages) == 0 || (n > 0 && n+len(r.Tiles) > pageSize) {
			pages = append(pages, nil)
			n = 0
		}
		pages[len(pages)-1] = append(pages[len(pages)-1], r)
		n += len(r.Tiles)
	}
	p.Pages = max(len(pages), 1)
	p.Page = min(max(f.Page, 1), p.Pages)
	if len(pages) > 0 {
		p.Racks = pages[p.Page-1]
	}
	return p
}

// upgradeView is a Machine's in-place upgrade as the console shows it.
type upgradeView struct {
	State  string // Draining, Applying, Verifying, Verified, Failed, Rejected
	Detail string
	Class  health
	Plan   string
	Failed bool
}

// machineUpgrade says where a Machine's in-place upgrade is: draining
// with pods left, applying (the agent's phase), verifying, done, or
// rolled back with the agent's reason.
func machineUpgrade(m *metalv1.Machine) *upgradeView {
	up := m.Status.Upgrade
	if up == nil {
		return nil
	}
	v := &upgradeView{State: string(up.State), Plan: up.PlanID, Class: healthBusy}
	fromTo := orDash(up.FromVersion) + " → " + up.Version
	switch up.State {
	case metalv1.UpgradeDraining:
		v.Detail = fmt.Sprintf("%s: cordoned, draining (%d pods left)", fromTo, up.PodsLeft)
	case metalv1.UpgradeApplying:
		v.Detail = fromTo + ": the agent has the plan"
		if r := up.AgentResult; r != nil && r.PlanID == up.PlanID && r.Outcome == metalv1.AgentUpgradeInProgress && r.Message != "" {
			v.Detail = fromTo + ": " + r.Message
		}
	case metalv1.UpgradeSucceeded:
		v.State = "Verifying"
		v.Detail = fromTo + ": installed; checking the Node runs it, Ready"
	case metalv1.UpgradeVerified:
		v.Class = healthOK
		v.Detail = fromTo + ": done"
		if up.FinishedAt != nil && up.StartedAt != nil {
			v.Detail += " in " + up.FinishedAt.Sub(up.StartedAt.Time).Round(time.Second).String()
		}
	case metalv1.UpgradeFailed:
		v.Class, v.Failed = healthError, true
		msg := up.Message
		if r := up.AgentResult; r != nil && r.Outcome == metalv1.AgentUpgradeFailed && r.Message != "" {
			msg = "rolled back: " + r.Message
		}
		v.Detail = fromTo + ": " + orDash(msg)
	case metalv1.UpgradeRejected:
		v.Class = healthError
		v.Detail = fromTo + ": rejected, nothing touched: " + orDash(up.Message)
	}
	return v
}

// machineRow is one Machine on the machines page.
type machineRow struct {
	ID, Name, Namespace, Set  string
	Phase, Spec, Running      string
	Host, HostURL, Node       string
	Upgrade                   *upgradeView
	Health                    health
	Message                   string
	CanUpgrade, CanRetryPlans bool
}

func machineRowOf(m *metalv1.Machine) machineRow {
	r := machineRow{ID: domID("m", m.Namespace, m.Name), Name: m.Name, Namespace: m.Namespace, Set: m.Labels[metalv1.LabelMachineSet],
		Phase: orDash(string(m.Status.Phase)), Spec: m.Spec.Version, Running: orDash(m.Status.Version), Health: healthOK,
		Upgrade: machineUpgrade(m)}
	if m.Status.HostRef != nil {
		r.Host, r.HostURL = m.Status.HostRef.Name, hostURL(m.Namespace, m.Status.HostRef.Name)
	}
	if m.Status.NodeRef != nil {
		r.Node = m.Status.NodeRef.Name
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionReady); c != nil && c.Status != metav1.ConditionTrue {
		r.Message = c.Reason
		if c.Message != "" {
			r.Message += ": " + c.Message
		}
		r.Health = healthBusy
	}
	switch m.Status.Phase {
	case metalv1.MachineFailed:
		r.Health = healthError
		r.Message = orDash(m.Status.FailureReason) + ": " + m.Status.FailureMessage
	case metalv1.MachineWaitingForHardware:
		r.Health = healthWait
	}
	if r.Upgrade != nil && r.Upgrade.Class == healthError {
		r.Health = healthError
	}
	r.CanUpgrade = m.DeletionTimestamp == nil && m.Status.Phase != metalv1.MachineFailed
	r.CanRetryPlans = r.Upgrade != nil && r.Upgrade.Failed
	return r
}

// domainProgress is a MachineSet rollout's progress in one failure domain.
type domainProgress struct {
	Domain          string
	UpToDate, Total int
	Updating        int
	Failed          []string
}

// setView is one MachineSet on the machines page.
type setView struct {
	ID, Name, Namespace string
	Version             string
	Replicas, Ready     int32
	UpToDate, Updating  int32
	Paused              bool
	PausedWhy           string
	Failed              []string
	Domains             []domainProgress
}

// setRollout computes a set's rollout: per failure domain, how many of
// its Machines run the template's version, and who failed.
func setRollout(ms *metalv1.MachineSet, members []*metalv1.Machine, hosts map[string]*metalv1.Host) setView {
	v := setView{ID: domID("ms", ms.Namespace, ms.Name), Name: ms.Name, Namespace: ms.Namespace, Version: ms.Spec.Template.Spec.Version,
		Replicas: ms.Status.Replicas, Ready: ms.Status.ReadyReplicas, UpToDate: ms.Status.UpToDateReplicas, Updating: ms.Status.UpdatingReplicas,
		Paused: ms.Spec.Paused}
	if c := meta.FindStatusCondition(ms.Status.Conditions, machine.ConditionRolloutPaused); c != nil && c.Status == metav1.ConditionTrue {
		v.Paused = true
		v.PausedWhy = c.Reason
		if c.Message != "" {
			v.PausedWhy += ": " + c.Message
		}
	} else if ms.Spec.Paused {
		v.PausedWhy = "spec.paused is set"
	}
	byDomain := map[string]*domainProgress{}
	for _, m := range members {
		d := m.Spec.FailureDomain
		if d == "" && m.Status.HostRef != nil {
			if h := hosts[m.Namespace+"/"+m.Status.HostRef.Name]; h != nil {
				d = h.Labels[metalv1.LabelFailureDomain]
			}
		}
		if d == "" {
			d = "(none)"
		}
		p := byDomain[d]
		if p == nil {
			p = &domainProgress{Domain: d}
			byDomain[d] = p
		}
		p.Total++
		switch up := m.Status.Upgrade; {
		case m.Status.Version == v.Version && m.Spec.Version == v.Version && (up == nil || up.State == metalv1.UpgradeVerified):
			p.UpToDate++
		case up != nil && up.State == metalv1.UpgradeFailed:
			p.Failed = append(p.Failed, m.Name)
			v.Failed = append(v.Failed, m.Name)
		case up != nil && up.State != metalv1.UpgradeVerified:
			p.Updating++
		}
	}
	for _, p := range byDomain {
		v.Domains = append(v.Domains, *p)
	}
	sort.Slice(v.Domains, func(i, j int) bool { return v.Domains[i].Domain < v.Domains[j].Domain })
	return v
}

// ticketRow is one webhook delivery on the tickets page.
type ticketRow struct {
	ID, Event, Object, State string
	Attempts                 int32
	LastError, TicketID      string
	TicketURL                string
	Enqueued, Next           string
	Open                     bool
}

func ticketRowOf(d *metalv1.TicketDelivery, now time.Time) ticketRow {
	r := ticketRow{ID: domID("t", d.Namespace, d.Name), Event: d.Spec.EventType, Object: d.Spec.Object.Kind + "/" + d.Spec.Object.Name,
		State: orDash(string(d.Status.State)), Attempts: d.Status.Attempts, LastError: d.Status.LastError, TicketID: d.Status.TicketID,
		Enqueued: ago(now, d.Spec.EnqueuedAt.Time)}
	if u, err := url.Parse(d.Status.TicketURL); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
		u.User = nil
		r.TicketURL = u.String()
	}
	if d.Status.NextAttemptAt != nil {
		r.Next = d.Status.NextAttemptAt.UTC().Format(time.RFC3339)
	}
	r.Open = d.Status.State == "" || d.Status.State == metalv1.TicketPending || d.Status.State == metalv1.TicketFailed
	return r
}

// bmcAddress shows a BMC address without any user information in it (the
// credentials live in a Secret, but an address could still carry some).
func bmcAddress(a string) string {
	u, err := url.Parse(a)
	if err != nil || u.Scheme == "" {
		return a
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t).Round(time.Second)
	if d < 0 {
		d = 0
	}
	return d.String() + " ago"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
