package storm

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/lab/image"
)

// labelStorm marks the storm's Hosts; the Machines select them by it.
const labelStorm = "bench.anvil.dev/storm"

const namespace = "default"

// hostName and hostMAC name the i-th simulated host. The MACs are locally
// administered (02:...) and distinct.
func hostName(i int) string { return fmt.Sprintf("storm-%04d", i) }

func hostMAC(i int) net.HardwareAddr {
	return net.HardwareAddr{0x02, 0xa5, 0x70, byte(i >> 16), byte(i >> 8), byte(i)}
}

// rack registers the storm's hosts and asks for their boot the way
// production does: manual:// Hosts (no BMC), a MachineClass whose template
// renders, one Machine per Host. Anvil claims the Hosts, sets their boot
// requests and asks a person to power them on; the rack then "powers on":
// every pending action is acknowledged (`anvil hosts ack-power`), which is
// when the Host controller records the one-time network boot.
type rack struct {
	c    client.Client
	n    int
	logf func(string, ...any)
	// static gives every Host a static address (spec.network.address,
	// staticAddr) instead of a lease from the range.
	static bool
}

// staticAddr is the i-th host's static address: 198.18.32.0/20, outside
// the dynamic range, on the pair's /16.
func staticAddr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{198, 18, byte(32 + (i+1)>>8), byte(i + 1)})
}

func newRack(env *envtest.Env, n int, logf func(string, ...any)) (*rack, error) {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 2000 // the benchmark's own client must not be the bottleneck
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	return &rack{c: c, n: n, logf: logf}, nil
}

// setUp creates everything and returns when every Host's one-time network
// boot is recorded (status.bootRequestID == spec.bootRequest.id).
func (r *rack) setUp(ctx context.Context, class image.ClassOptions) error {
	mc, err := image.MachineClass(class)
	if err != nil {
		return err
	}
	mc.TypeMeta = metav1.TypeMeta{}
	if err := r.c.Create(ctx, mc); err != nil {
		return fmt.Errorf("create MachineClass %s: %w", mc.Name, err)
	}
	if err := r.parallel(ctx, func(i int) error {
		h := &metalv1.Host{
			ObjectMeta: metav1.ObjectMeta{Name: hostName(i), Namespace: namespace, Labels: map[string]string{
				labelStorm: "yes", metalv1.LabelRack: fmt.Sprintf("r%02d", i/40), metalv1.LabelFailureDomain: fmt.Sprintf("fd-%d", i%4),
			}},
			Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://storm-" + hostName(i)}, BootMACs: []string{hostMAC(i).String()}},
		}
		if r.static {
			h.Spec.Network = &metalv1.HostNetwork{Address: netip.PrefixFrom(staticAddr(i), 16).String()}
		}
		return r.c.Create(ctx, h)
	}); err != nil {
		return fmt.Errorf("create Hosts: %w", err)
	}
	if err := r.waitHosts(ctx, "Available", 10*time.Minute, func(h *metalv1.Host) bool { return h.Status.State == metalv1.HostAvailable }); err != nil {
		return err
	}
	if err := r.waitClass(ctx, mc.Name, 2*time.Minute); err != nil {
		return err
	}
	if err := r.parallel(ctx, func(i int) error {
		m := &metalv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("storm-m-%04d", i), Namespace: namespace},
			Spec: metalv1.MachineSpec{
				MachineClassRef: metalv1.LocalObjectReference{Name: mc.Name},
				HostSelector:    metav1.LabelSelector{MatchLabels: map[string]string{labelStorm: "yes"}},
				Version:         image.DefaultKubeletVersion,
			},
		}
		return r.c.Create(ctx, m)
	}); err != nil {
		return fmt.Errorf("create Machines: %w", err)
	}
	if err := r.waitHosts(ctx, "waiting for power on (manual action)", 15*time.Minute, func(h *metalv1.Host) bool {
		p := h.Status.PendingPowerAction
		return h.Spec.BootRequest != nil && p != nil && p.BootDevice != ""
	}); err != nil {
		return err
	}
	if err := r.ackAll(ctx); err != nil {
		return err
	}
	return r.waitHosts(ctx, "network boot recorded", 15*time.Minute, func(h *metalv1.Host) bool {
		br := h.Spec.BootRequest
		return br != nil && h.Status.BootRequestID == br.ID && h.Status.State == metalv1.HostProvisioning
	})
}

// ackAll acknowledges every pending manual power action, as `anvil hosts
// ack-power` does.
func (r *rack) ackAll(ctx context.Context) error {
	return r.parallel(ctx, func(i int) error {
		for attempt := 0; ; attempt++ {
			h := &metalv1.Host{}
			if err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: hostName(i)}, h); err != nil {
				return err
			}
			p := h.Status.PendingPowerAction
			if p == nil {
				return nil // acted on already
			}
			patch := client.MergeFromWithOptions(h.DeepCopy(), client.MergeFromWithOptimisticLock{})
			if h.Annotations == nil {
				h.Annotations = map[string]string{}
			}
			h.Annotations[inventory.AnnotationAckPower] = inventory.PendingActionID(p)
			err := r.c.Patch(ctx, h, patch)
			if err == nil || !apierrors.IsConflict(err) || attempt >= 10 {
				return err
			}
		}
	})
}

// parallel runs fn for every host index, 32 at a time.
func (r *rack) parallel(ctx context.Context, fn func(i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for i := range r.n {
		g.Go(func() error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fn(i)
		})
	}
	return g.Wait()
}

// waitHosts polls until ok holds for all of the storm's Hosts.
func (r *rack) waitHosts(ctx context.Context, what string, timeout time.Duration, ok func(*metalv1.Host) bool) error {
	deadline := time.Now().Add(timeout)
	start := time.Now()
	lastLog := time.Now()
	for {
		var l metalv1.HostList
		if err := r.c.List(ctx, &l, client.InNamespace(namespace), client.MatchingLabels{labelStorm: "yes"}); err != nil {
			return err
		}
		done := 0
		states := map[string]int{}
		for i := range l.Items {
			if ok(&l.Items[i]) {
				done++
			}
			states[string(l.Items[i].Status.State)]++
		}
		if done == r.n {
			r.logf("storm: %d Hosts %s after %s", r.n, what, time.Since(start).Round(time.Second))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d Hosts %s after %v (states %v)", done, r.n, what, timeout, states)
		}
		if time.Since(lastLog) > 30*time.Second {
			r.logf("storm: %d/%d Hosts %s (states %v)", done, r.n, what, states)
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (r *rack) waitClass(ctx context.Context, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		mc := &metalv1.MachineClass{}
		if err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, mc); err != nil {
			return err
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, metalv1.ConditionConfigValid)
		if c != nil && c.Status == metav1.ConditionTrue {
			return nil
		}
		if time.Now().After(deadline) {
			msg := "no condition yet"
			if c != nil {
				msg = c.Reason + ": " + c.Message
			}
			return fmt.Errorf("MachineClass %s not valid after %v: %s", name, timeout, msg)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
