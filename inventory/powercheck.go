package inventory

import (
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// powerChecks remembers, in memory only, when each Host's power was last
// read and when the next poll is due. Keeping this out of the Host's status
// is what makes an idle fleet cheap: a poll that finds nothing new writes
// nothing to the API server (and wakes no Machine). status.lastPowerCheck
// gets the remembered time only when the status is written anyway (stamp).
// After a restart nothing is remembered: the first poll of each Host is
// spread over one poll interval (due), so a restart does not poll every BMC
// at once. The zero value is ready to use.
type powerChecks struct {
	mu sync.Mutex
	m  map[types.NamespacedName]powerCheck
}

type powerCheck struct {
	uid     types.UID // a Host deleted and created again starts afresh
	checked time.Time // last successful read; zero when only scheduled
	next    time.Time // when the next poll is due
	// state is what the last read found; quiet counts the reads in a row
	// that found it unchanged. Each doubles the wait to the next poll, up
	// to the maximum interval: a Host nobody touches costs less and less.
	state metalv1.PowerState
	quiet int
	// woken: a BMC event made this poll due (until the next read);
	// relaxed: the poll was moved out when the BMC's events went live.
	woken, relaxed bool
	// wakes counts the events ever delivered: a read that began before
	// the last of them (reading) does not spend it.
	wakes uint64
}

// pollWait is the wait after quiet unchanged reads in a row: interval
// doubled per read, at most maxInterval (never less than interval).
func pollWait(interval, maxInterval time.Duration, quiet int) time.Duration {
	d := interval
	for i := 0; i < quiet && d < maxInterval; i++ {
		d *= 2
	}
	return max(min(d, maxInterval), interval)
}

func hostKey(h *metalv1.Host) types.NamespacedName {
	return types.NamespacedName{Namespace: h.Namespace, Name: h.Name}
}

// reading is called as a power read begins; record gets what it returns.
func (p *powerChecks) reading(h *metalv1.Host) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.m[hostKey(h)]; ok && c.uid == h.UID {
		return c.wakes
	}
	return 0
}

// record notes a successful power read at now that found state; the next
// poll is due one jittered wait later (pollWait: longer while the power
// stays as it was). seen is what reading returned as the read began: a BMC
// event delivered since may tell of a change the read came too early to
// see, so the next read stays due at once.
func (p *powerChecks) record(h *metalv1.Host, now time.Time, interval, maxInterval time.Duration, state metalv1.PowerState, seen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[types.NamespacedName]powerCheck{}
	}
	c := p.m[hostKey(h)]
	quiet, wakes := 0, uint64(0)
	if c.uid == h.UID {
		wakes = c.wakes
		if !c.checked.IsZero() && c.state == state {
			quiet = c.quiet + 1
		}
	}
	next := powerCheck{uid: h.UID, checked: now, next: now.Add(jitter(pollWait(interval, maxInterval, quiet))), state: state, quiet: quiet, wakes: wakes}
	if wakes != seen {
		next.next, next.woken = now, true
	}
	p.m[hostKey(h)] = next
}

// active marks a Host Anvil just acted on: its polls start again from the
// base interval.
func (p *powerChecks) active(h *metalv1.Host) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.m[hostKey(h)]; ok && c.uid == h.UID {
		c.quiet, c.state = 0, ""
		p.m[hostKey(h)] = c
	}
}

// due is when the Host's next poll is due. A Host not seen since this
// process started is scheduled now: by its status.lastPowerCheck plus an
// interval if that is still ahead, else at a random point of the next
// interval.
func (p *powerChecks) due(h *metalv1.Host, now time.Time, interval time.Duration) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.m[hostKey(h)]; ok && c.uid == h.UID {
		return c.next
	}
	next := now.Add(time.Duration(rand.Int64N(int64(interval) + 1)))
	if last := h.Status.LastPowerCheck; last != nil {
		if d := last.Add(jitter(interval)); d.After(now) {
			next = d
		}
	}
	if p.m == nil {
		p.m = map[types.NamespacedName]powerCheck{}
	}
	p.m[hostKey(h)] = powerCheck{uid: h.UID, next: next}
	return next
}

// stamp copies the remembered time of the last read into the status that
// is about to be written, when it is newer than what the status holds.
func (p *powerChecks) stamp(h *metalv1.Host) {
	p.mu.Lock()
	c, ok := p.m[hostKey(h)]
	p.mu.Unlock()
	if !ok || c.uid != h.UID || c.checked.IsZero() {
		return
	}
	t := metav1.NewTime(c.checked)
	if last := h.Status.LastPowerCheck; last == nil || last.Before(&t) {
		h.Status.LastPowerCheck = &t
	}
}

// forget drops a deleted Host.
func (p *powerChecks) forget(key types.NamespacedName) {
	p.mu.Lock()
	delete(p.m, key)
	p.mu.Unlock()
}

// wake makes a Host's next poll due at once (a BMC event may be about its
// power). A Host not seen yet is scheduled by due anyway.
func (p *powerChecks) wake(key types.NamespacedName, now time.Time) {
	p.soon(key, now)
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.m[key]; ok {
		c.woken = true
		c.wakes++
		p.m[key] = c
	}
}

// woken reports whether a BMC event made the Host's poll due.
func (p *powerChecks) woken(h *metalv1.Host) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.m[hostKey(h)]
	return ok && c.uid == h.UID && c.woken
}

// relax moves a Host's next poll out to one jittered interval after its
// last read, once (its BMC's events now tell of changes). A Host not read
// yet keeps its schedule, and so does one an event woke.
func (p *powerChecks) relax(h *metalv1.Host, interval time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.m[hostKey(h)]
	if !ok || c.uid != h.UID || c.checked.IsZero() || c.woken || c.relaxed {
		return
	}
	c.relaxed = true
	if at := c.checked.Add(jitter(interval)); at.After(c.next) {
		c.next = at
	}
	p.m[hostKey(h)] = c
}

// soon brings a Host's next poll forward to at, if it is later, and
// starts its backoff again (its BMC event stream ended).
func (p *powerChecks) soon(key types.NamespacedName, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.m[key]; ok {
		if c.next.After(at) {
			c.next = at
		}
		c.quiet = 0
		p.m[key] = c
	}
}

// statusUnchanged reports whether two statuses differ in nothing but
// lastPowerCheck, the one field not worth a write on its own.
func statusUnchanged(a, b *metalv1.HostStatus) bool {
	a2, b2 := *a, *b
	a2.LastPowerCheck, b2.LastPowerCheck = nil, nil
	return equality.Semantic.DeepEqual(a2, b2)
}
