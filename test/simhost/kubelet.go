package simhost

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kubelet registers the host's Node and keeps its status posted.
type kubelet struct {
	s       *simHost
	cfg     *bootConfig
	bootReq string
	bootID  string

	mu    sync.Mutex
	since metav1.Time // Ready since
}

func newKubelet(s *simHost, cfg *bootConfig, bootReq string) *kubelet {
	return &kubelet{s: s, cfg: cfg, bootReq: bootReq, bootID: s.f.bootID()}
}

func (k *kubelet) run(ctx context.Context) {
	f := k.s.f
	if !sleep(ctx, f.jitter(f.o.KubeletStartDelay)) {
		return
	}
	for attempt := 0; ; attempt++ {
		err := k.register(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		f.fail(fmt.Errorf("host %s: registering Node %s: %w", k.s.key, k.cfg.nodeName, err))
		if !sleep(ctx, min(time.Duration(attempt+1)*time.Second, 10*time.Second)) {
			return
		}
	}
	f.stats.nodes.Add(1)
	f.event(Event{Host: k.s.key, Kind: EventNodeRegistered, BootRequest: k.bootReq, Version: k.s.currentVersion()})
	// The first periodic post lands anywhere in the interval, so a fleet
	// that registered together does not post in step.
	next := time.Duration(f.float() * float64(f.o.NodeStatusInterval))
	for sleep(ctx, next) {
		if err := k.postStatus(ctx); err != nil && ctx.Err() == nil {
			f.fail(fmt.Errorf("host %s: node status: %w", k.s.key, err))
		}
		next = f.jitter(f.o.NodeStatusInterval)
	}
}

// node is the Node as the kubelet registers it.
func (k *kubelet) node() *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: k.cfg.nodeName, Labels: map[string]string{
			corev1.LabelHostname: k.cfg.nodeName, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
		}},
		Spec: corev1.NodeSpec{ProviderID: k.cfg.providerID},
	}
	n.Status = k.status()
	return n
}

func (k *kubelet) status() corev1.NodeStatus {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	k.mu.Lock()
	if k.since.IsZero() {
		k.since = now
	}
	since := k.since
	k.mu.Unlock()
	cond := func(t corev1.NodeConditionType, st corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: st, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: since}
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("900Gi"),
	}
	return corev1.NodeStatus{
		Capacity: capacity, Allocatable: capacity,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
		},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: k.s.addr.String()}, {Type: corev1.NodeHostName, Address: k.cfg.nodeName}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID: k.bootID[:8] + k.bootID[9:13], SystemUUID: k.s.key.Name, BootID: k.bootID,
			KernelVersion: "6.1.0-simhost", OSImage: "Simulated Linux", ContainerRuntimeVersion: "fake://1.0",
			KubeletVersion: k.s.currentVersion(), OperatingSystem: "linux", Architecture: "amd64",
		},
	}
}

// register creates the Node, or takes over the one a previous boot of
// this Machine registered, the way the kubelet does. A Node of a host
// booted with Cluster API bootstrap data has no providerID until Anvil
// sets it.
func (k *kubelet) register(ctx context.Context) error {
	f := k.s.f
	if !f.acquire(ctx) {
		return ctx.Err()
	}
	defer f.release()
	n := k.node()
	err := f.c.Create(ctx, n)
	if apierrors.IsAlreadyExists(err) {
		old := &corev1.Node{}
		if err := f.c.Get(ctx, types.NamespacedName{Name: n.Name}, old); err != nil {
			return err
		}
		// kubeadm's kubelet has none: Anvil set the one the Node has.
		if k.cfg.providerID != "" && old.Spec.ProviderID != "" && old.Spec.ProviderID != k.cfg.providerID {
			return fmt.Errorf("a Node %s with providerID %s exists", n.Name, old.Spec.ProviderID)
		}
		return k.patchStatus(ctx, n.Status)
	}
	if err != nil {
		return err
	}
	if len(n.Status.Conditions) == 0 { // status dropped on create: post it
		return k.patchStatus(ctx, k.status())
	}
	return nil
}

// postStatus is one periodic node status update.
func (k *kubelet) postStatus(ctx context.Context) error {
	f := k.s.f
	if !f.acquire(ctx) {
		return ctx.Err()
	}
	defer f.release()
	if err := k.patchStatus(ctx, k.status()); err != nil {
		return err
	}
	f.stats.nodeStatus.Add(1)
	f.event(Event{Host: k.s.key, Kind: EventNodeStatusPosted, BootRequest: k.bootReq, Version: k.s.currentVersion()})
	return nil
}

// restarted is the kubelet coming back on a new version: it posts status
// with the new nodeInfo at once.
func (k *kubelet) restarted(ctx context.Context) error {
	return k.postStatus(ctx)
}

// patchStatus sends the kubelet's strategic merge patch of node status
// (conditions merge by type).
func (k *kubelet) patchStatus(ctx context.Context, st corev1.NodeStatus) error {
	b, err := json.Marshal(map[string]any{"status": map[string]any{
		"conditions": st.Conditions, "nodeInfo": st.NodeInfo, "addresses": st.Addresses,
		"capacity": st.Capacity, "allocatable": st.Allocatable,
	}})
	if err != nil {
		return err
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: k.cfg.nodeName}}
	return k.s.f.c.Status().Patch(ctx, n, client.RawPatch(types.StrategicMergePatchType, b))
}
