package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	"anvil.dev/anvil/capi/infra"
	"anvil.dev/anvil/capi/inplace"
	"anvil.dev/anvil/test/capitest"
	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/lab/stack"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/pxetest"
)

// The Cluster API lab test's names.
const (
	capiCluster = "lab"
	capiMD      = "workers"
	capiCP      = "lab-control-plane"
	// capiLab is the test's lab (network namespace): its own, so that
	// make test runs it beside make e2e's tests.
	capiLab = "anvil-e2e-capi"
)

// TestLabClusterAPI: Cluster API's real managers (core and the kubeadm
// bootstrap provider, v1.14, InPlaceUpdates and RuntimeSDK on) drive Anvil
// as their infrastructure provider on real hosts. A MachineDeployment of
// two workers lands on the lab's two VMs (IPMI and BIOS, Redfish and
// UEFI): Anvil installs the Debian image to disk and serves Cluster API's
// join data, and kubeadm joins the Nodes (their client certificates
// approved by kube-controller-manager, not by Anvil), on the Machines'
// kubelet. Bumping the MachineDeployment's version upgrades both in place
// through Anvil's extension: same Machines, Hosts and boot IDs, Cluster API's
// Machines UpToDate. Then a version whose kubelet never becomes healthy
// is rolled back on the host by Anvil and reported to Cluster API as a
// failed in-place update, and no hardware is replaced.
//
// The workload cluster is the lab's own API server, which the Nodes join.
// Cluster API's kubeadm bootstrap provider writes join data only once the
// Cluster's control plane is initialized: here an externally managed
// control plane (Cluster API's control-plane contract), a LabControlPlane
// whose status the test writes, for the lab's API server that kubeadm's
// own init phases prepared for joins (stack.KubeadmJoinReady). A
// KubeadmControlPlane on a lab VM would need the control plane's images
// in the host image (kubeadm init pulls etcd and kube-apiserver images,
// and the lab has no registry).
func TestLabClusterAPI(t *testing.T) {
	gateE2E(t)
	capiBin := capitest.Dir(t)
	img := diskImage(t)
	root, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubeadm := filepath.Join(root, "bin", "kubeadm")
	for _, f := range []string{"kubeadm", "kubelet-" + patchFrom, "kubelet-" + patchTo} {
		if _, err := os.Stat(filepath.Join(root, "bin", f)); err != nil {
			need.OrSkip(t, "bin/%s missing: run make tools", f)
		}
	}
	extPort := need.FreePort(t)
	var cc client.Client // with Cluster API's types
	var capi *capitest.CAPI
	var stopOnce sync.Once
	stopCAPI := func() {
		stopOnce.Do(func() {
			if err := capi.Stop(); err != nil {
				t.Errorf("stopping Cluster API: %v", err)
			}
		})
	}
	e := startLabWith(t, []lab.HostOptions{
		{Name: "vm-capi-bios", BMC: lab.IPMI, DiskMiB: 4096, MemoryMiB: 2048},
		{Name: "vm-capi-uefi", BMC: lab.Redfish, Firmware: pxetest.UEFI, DiskMiB: 4096, MemoryMiB: 2048},
	}, []string{"--capi",
		"--capi-extension-bind-address", "127.0.0.1:" + strconv.Itoa(extPort),
		// Anvil makes its serving certificate in this Secret and registers
		// its ExtensionConfig; Cluster API injects the CA from the Secret.
		"--capi-extension-cert-secret", ns + "/anvil-capi-extension-cert",
		"--capi-extension-url", "https://127.0.0.1:" + strconv.Itoa(extPort),
		"--machine-boot-timeout", "25m", "--machine-join-timeout", "20m"},
		func(o *stack.Options) {
			// Its own lab image cache too: make e2e's tests may build theirs
			// at the same time.
			o.DiskImage, o.LabName, o.CacheDir = img, capiLab, need.CacheDir(t, "lab-capi")
			o.ControllerManagerControllers = stack.KubeadmControllers
			// Cluster API's CRDs before anvil serve --capi starts.
			o.BeforeControllers = func(ctx context.Context, s *stack.Stack) error {
				var err error
				if cc, err = client.New(s.CP.Config, client.Options{Scheme: capitest.Scheme()}); err != nil {
					return err
				}
				capi, err = capitest.Run(ctx, capitest.RunOptions{Bin: capiBin, Dir: filepath.Join(o.Dir, "capi"), Client: cc, Kubeconfig: s.Kubeconfig})
				if capi != nil {
					t.Cleanup(stopCAPI) // if the stack does not start
				}
				if err != nil {
					return fmt.Errorf("cluster API: %w", err)
				}
				return s.KubeadmJoinReady(ctx, kubeadm)
			}
		})
	st, ctx := e.st, context.Background()
	// Before the stack's API server stops (cleanups run last first).
	t.Cleanup(stopCAPI)
	t.Cleanup(func() {
		if t.Failed() {
			for name, m := range capi.Managers {
				b, _ := os.ReadFile(m.Log)
				lines := strings.Split(string(b), "\n")
				t.Logf("--- tail of %s's log ---\n%s", name, strings.Join(lines[max(0, len(lines)-40):], "\n"))
			}
		}
	})
	e.logf("Cluster API %s up beside the lab", capi.Version)
	e.importHosts("vm-capi-bios", "vm-capi-uefi")
	e.waitExtension(ctx, cc)

	// 1. The cluster, its control plane and two workers on patchFrom.
	e.createLabCluster(ctx, cc)
	e.createWorkers(ctx, cc, st.DiskClass.Name, patchFrom)
	workers := e.waitCAPIWorkers(ctx, cc, 40*time.Minute, patchFrom, nil)
	boots := map[string]string{}
	hosts := map[string]string{}
	for _, w := range workers {
		n := e.node(w.Status.NodeRef.Name)
		boots[w.Spec.InfrastructureRef.Name], hosts[w.Name] = n.Status.NodeInfo.BootID, n.Spec.ProviderID
		e.checkKubeadmJoined(ctx, n)
		e.logf("Machine %s: Node %s (%s) Ready on kubelet %s, joined by kubeadm", w.Name, n.Name, n.Spec.ProviderID, n.Status.NodeInfo.KubeletVersion)
	}

	// 2. A patch release in place, through Anvil's extension.
	e.patchCAPIMD(ctx, cc, func(s *clusterv1.MachineSpec) { s.Version = patchTo })
	upgraded := e.waitCAPIWorkers(ctx, cc, 15*time.Minute, patchTo, workers)
	for _, w := range upgraded {
		e.checkUpgraded(ctx, w.Spec.InfrastructureRef.Name, patchTo, boots)
		if n := e.node(w.Status.NodeRef.Name); n.Spec.ProviderID != hosts[w.Name] {
			t.Errorf("Machine %s moved from %s to %s", w.Name, hosts[w.Name], n.Spec.ProviderID)
		}
	}
	e.logf("MachineDeployment %s -> %s in place on both workers", patchFrom, patchTo)

	// 3. A kubelet that never becomes healthy: rolled back on the host,
	// reported to Cluster API, no Machine replaced.
	e.addBrokenKubelets(ctx, st.DiskClass.Name)
	e.patchCAPIMD(ctx, cc, func(s *clusterv1.MachineSpec) { s.Version = unhealthVersion })
	var failed *clusterv1.Machine
	e.waitFor(15*time.Minute, "Cluster API to report the failed in-place update", func(ctx context.Context) (bool, string) {
		ms, err := e.capiWorkers(ctx, cc)
		if err != nil {
			return false, err.Error()
		}
		var d []string
		for i, m := range ms {
			if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineUpdatingCondition); c != nil && c.Reason == clusterv1.MachineInPlaceUpdateFailedReason {
				failed = &ms[i]
				return true, ""
			}
			d = append(d, describeCAPI(&m))
		}
		return false, strings.Join(d, "; ")
	})
	c := meta.FindStatusCondition(failed.Status.Conditions, clusterv1.MachineUpdatingCondition)
	e.logf("Cluster API's Machine %s: Updating %s: %s", failed.Name, c.Reason, c.Message)
	e.checkRolledBack(ctx, failed.Spec.InfrastructureRef.Name, unhealthVersion, "health", patchTo, boots)
	// Cluster API's condition says to read its log, where the extension's
	// answer is: the agent's reason.
	e.waitFor(3*time.Minute, "Cluster API's core manager to log Anvil's failure answer", func(context.Context) (bool, string) {
		b, err := os.ReadFile(capi.Managers[capitest.Core].Log)
		if err != nil {
			return false, err.Error()
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "got failure response") && strings.Contains(line, failed.Spec.InfrastructureRef.Name) && strings.Contains(line, "rolled back") {
				e.logf("Cluster API's core manager: %s", line)
				return true, ""
			}
		}
		return false, "no failure response naming the Machine and the rollback"
	})
	after, err := e.capiWorkers(ctx, cc)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range after {
		names = append(names, m.Name)
	}
	if want := []string{workers[0].Name, workers[1].Name}; !slices.Equal(names, want) {
		t.Errorf("Cluster API's worker Machines are %v after the failed update, want the same %v (no replacement)", names, want)
	}
}

// waitExtension waits until Cluster API has discovered the handlers of the
// ExtensionConfig Anvil registered.
func (e *e2e) waitExtension(ctx context.Context, cc client.Client) {
	e.t.Helper()
	e.waitFor(3*time.Minute, "Cluster API to discover Anvil's extension", func(ctx context.Context) (bool, string) {
		ec := &runtimev1.ExtensionConfig{}
		if err := cc.Get(ctx, client.ObjectKey{Name: inplace.ExtensionConfigName}, ec); err != nil {
			return false, err.Error()
		}
		return capitest.AnvilHandlersDiscovered(ec)
	})
}

// createLabCluster creates the Cluster on an AnvilCluster and the
// LabControlPlane, with the lab's API server as the workload cluster: its
// kubeconfig Secret (an admin's, on loopback, where Cluster API and Anvil
// run) and its CA in <cluster>-ca, whose certificate's hash Cluster API's
// join data pins (the kubeadm bootstrap provider insists on the key too,
// as a control plane it made would have it).
func (e *e2e) createLabCluster(ctx context.Context, cc client.Client) {
	e.t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	b, err := os.ReadFile(filepath.Join("testdata", "labcontrolplane-crd.yaml"))
	if err == nil {
		err = yaml.UnmarshalStrict(b, crd)
	}
	if err == nil {
		err = cc.Create(ctx, crd)
	}
	if err != nil {
		e.t.Fatalf("LabControlPlane CRD: %v", err)
	}
	e.waitFor(time.Minute, "the LabControlPlane CRD established", func(ctx context.Context) (bool, string) {
		if err := cc.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return false, err.Error()
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %v", crd.Status.Conditions)
	})
	kubeconfig, err := os.ReadFile(e.st.Kubeconfig)
	if err != nil {
		e.t.Fatal(err)
	}
	caCert, err := os.ReadFile(e.st.CP.CACert)
	if err != nil {
		e.t.Fatal(err)
	}
	caKey, err := os.ReadFile(e.st.CP.CAKey)
	if err != nil {
		e.t.Fatal(err)
	}
	labels := map[string]string{clusterv1.ClusterNameLabel: capiCluster}
	host, port, err := net.SplitHostPort(strings.TrimPrefix(e.st.Lab.APIServerURL(), "https://"))
	if err != nil {
		e.t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	endpoint := clusterv1.APIEndpoint{Host: host, Port: int32(p)}
	cp := &unstructured.Unstructured{}
	cp.SetAPIVersion("controlplane.lab.anvil.dev/v1alpha1")
	cp.SetKind("LabControlPlane")
	cp.SetNamespace(ns)
	cp.SetName(capiCP)
	cp.Object["spec"] = map[string]any{"version": "v1.37.2", "controlPlaneEndpoint": map[string]any{"host": host, "port": int64(p)}}
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: infra.KubeconfigSecretName(capiCluster), Namespace: ns, Labels: labels},
			Type: clusterv1.ClusterSecretType, Data: map[string][]byte{infra.KubeconfigSecretKey: kubeconfig}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: capiCluster + "-ca", Namespace: ns, Labels: labels},
			Type: clusterv1.ClusterSecretType, Data: map[string][]byte{corev1.TLSCertKey: caCert, corev1.TLSPrivateKeyKey: caKey}},
		cp,
		&infrav1.AnvilCluster{ObjectMeta: metav1.ObjectMeta{Name: capiCluster, Namespace: ns}, Spec: infrav1.AnvilClusterSpec{
			HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"anvil.dev/lab": capiLab}}, ControlPlaneEndpoint: endpoint}},
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: capiCluster, Namespace: ns}, Spec: clusterv1.ClusterSpec{
			ControlPlaneRef:   clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.lab.anvil.dev", Kind: "LabControlPlane", Name: capiCP},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilCluster", Name: capiCluster}}},
	} {
		if err := cc.Create(ctx, o); err != nil {
			e.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	// The control-plane provider's part: the lab's API server is up and
	// prepared for joins.
	cp.Object["status"] = map[string]any{"version": "v1.37.2", "externalManagedControlPlane": true,
		"initialization": map[string]any{"controlPlaneInitialized": true}}
	if err := cc.Status().Update(ctx, cp); err != nil {
		e.t.Fatalf("LabControlPlane status: %v", err)
	}
	e.waitFor(2*time.Minute, "Cluster "+capiCluster+" with its control plane initialized", func(ctx context.Context) (bool, string) {
		cl := &clusterv1.Cluster{}
		if err := cc.Get(ctx, types.NamespacedName{Namespace: ns, Name: capiCluster}, cl); err != nil {
			return false, err.Error()
		}
		return ptr.Deref(cl.Status.Initialization.ControlPlaneInitialized, false) && ptr.Deref(cl.Status.Initialization.InfrastructureProvisioned, false),
			fmt.Sprintf("initialization %+v, conditions %v", cl.Status.Initialization, cl.Status.Conditions)
	})
}

// createWorkers creates the MachineDeployment of two workers of class on
// version, joined by kubeadm (KubeadmConfigTemplate, the Node named by the
// meta-data as in deploy/examples/capi), one updated at a time and none
// added (Cluster API updates in place only Machines it may take out).
//
// Cluster API's KubeadmVersionSkew preflight check is skipped: it assumes
// a Machine's image has kubeadm of the Machine's version, which must then
// match the control plane's minor; the lab's image has the control plane's
// kubeadm (v1.37.2) whatever kubelet the Machine runs, within kubeadm's
// own skew policy.
func (e *e2e) createWorkers(ctx context.Context, cc client.Client, class, version string) {
	e.t.Helper()
	md := capitest.InPlaceWorkers(ns, capiMD, capiCluster, 2, version, capiMD, capiMD)
	md.Annotations = map[string]string{clusterv1.MachineSetSkipPreflightChecksAnnotation: string(clusterv1.MachineSetPreflightCheckKubeadmVersionSkew)}
	for _, o := range []client.Object{
		&infrav1.AnvilMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: capiMD, Namespace: ns}, Spec: infrav1.AnvilMachineTemplateSpec{
			Template: infrav1.AnvilMachineTemplateResource{Spec: infrav1.AnvilMachineSpec{
				MachineClassRef: infrav1.LocalObjectReference{Name: class},
				HostSelector:    metav1.LabelSelector{MatchLabels: map[string]string{"anvil.dev/lab": capiLab}}}}}},
		labJoinTemplate(),
		md,
	} {
		if err := cc.Create(ctx, o); err != nil {
			e.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// labJoinTemplate is Cluster API's join template with what this image's
// admin adds: kubeadm join waits for containerd (and the image's first-boot
// import of its pod images into it) to answer, as a preKubeadmCommand.
// Without it, on a first boot slowed by four TCG VMs on two cores, kubeadm's
// preflight once gave up on the CRI socket ("context deadline exceeded")
// and the join never happened.
func labJoinTemplate() *bootstrapv1.KubeadmConfigTemplate {
	t := capitest.JoinTemplate(ns, capiMD)
	t.Spec.Template.Spec.PreKubeadmCommands = append(t.Spec.Template.Spec.PreKubeadmCommands,
		"systemctl start containerd.service anvil-import-images.service",
		"timeout 300 sh -c 'until ctr --namespace k8s.io version >/dev/null 2>&1; do sleep 2; done'")
	return t
}

// capiWorkers are the MachineDeployment's Machines, by name.
func (e *e2e) capiWorkers(ctx context.Context, cc client.Client) ([]clusterv1.Machine, error) {
	var l clusterv1.MachineList
	if err := cc.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: capiMD}); err != nil {
		return nil, err
	}
	slices.SortFunc(l.Items, func(a, b clusterv1.Machine) int { return strings.Compare(a.Name, b.Name) })
	return l.Items, nil
}

// waitCAPIWorkers waits for two worker Machines on version with Ready
// Nodes and UpToDate, and when before is given, the same Machines as before.
func (e *e2e) waitCAPIWorkers(ctx context.Context, cc client.Client, timeout time.Duration, version string, before []clusterv1.Machine) []clusterv1.Machine {
	e.t.Helper()
	var out []clusterv1.Machine
	e.waitFor(timeout, fmt.Sprintf("2 Cluster API workers with Ready Nodes, up to date on %s", version), func(ctx context.Context) (bool, string) {
		ms, err := e.capiWorkers(ctx, cc)
		if err != nil {
			return false, err.Error()
		}
		var d []string
		ok := len(ms) == 2
		for i := range ms {
			m := &ms[i]
			d = append(d, describeCAPI(m))
			if m.Spec.Version != version || !m.Status.NodeRef.IsDefined() || !meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.MachineUpToDateCondition) {
				ok = false
				continue
			}
			n := &corev1.Node{}
			if err := e.c.Get(ctx, types.NamespacedName{Name: m.Status.NodeRef.Name}, n); err != nil || !nodeIsReady(n) || n.Status.NodeInfo.KubeletVersion != version {
				ok = false
			}
		}
		out = ms
		return ok, strings.Join(d, "; ")
	})
	if before != nil {
		for i := range out {
			if out[i].Name != before[i].Name || out[i].UID != before[i].UID {
				e.t.Fatalf("Cluster API's workers are %s and %s, were %s and %s: replaced, not updated in place", out[0].Name, out[1].Name, before[0].Name, before[1].Name)
			}
		}
	}
	return out
}

// checkKubeadmJoined: the Node's client certificate came from a CSR for
// its name that kube-controller-manager approved for a token of kubeadm's
// bootstrap group, as kubeadm join's TLS bootstrap files it (Anvil
// approves only its own Machines' kubelets, with reason AnvilApproved).
func (e *e2e) checkKubeadmJoined(ctx context.Context, n *corev1.Node) {
	e.t.Helper()
	var l certificatesv1.CertificateSigningRequestList
	if err := e.c.List(ctx, &l); err != nil {
		e.t.Fatal(err)
	}
	var seen []string
	for _, csr := range l.Items {
		if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName || !slices.Contains(csr.Spec.Groups, "system:bootstrappers:kubeadm:default-node-token") {
			continue
		}
		b, _ := pem.Decode(csr.Spec.Request)
		if b == nil {
			continue
		}
		req, err := x509.ParseCertificateRequest(b.Bytes)
		if err != nil || req.Subject.CommonName != "system:node:"+n.Name {
			continue
		}
		for _, c := range csr.Status.Conditions {
			if c.Type == certificatesv1.CertificateApproved {
				if c.Reason == "AutoApproved" {
					return
				}
				seen = append(seen, csr.Name+": "+c.Reason)
			}
		}
	}
	e.t.Errorf("Node %s: no client CSR of kubeadm's bootstrap group approved by kube-controller-manager (others: %v)", n.Name, seen)
}

// patchCAPIMD changes the MachineDeployment's Machine template.
func (e *e2e) patchCAPIMD(ctx context.Context, cc client.Client, change func(*clusterv1.MachineSpec)) {
	e.t.Helper()
	md := &clusterv1.MachineDeployment{}
	if err := cc.Get(ctx, types.NamespacedName{Namespace: ns, Name: capiMD}, md); err != nil {
		e.t.Fatal(err)
	}
	p := client.MergeFrom(md.DeepCopy())
	change(&md.Spec.Template.Spec)
	if err := cc.Patch(ctx, md, p); err != nil {
		e.t.Fatalf("patching MachineDeployment %s: %v", capiMD, err)
	}
}

// describeCAPI says where a Cluster API Machine is, for a wait's message.
func describeCAPI(m *clusterv1.Machine) string {
	var conds []string
	for _, c := range m.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			conds = append(conds, c.Type+"="+string(c.Status)+" "+c.Reason+": "+c.Message)
		}
	}
	return fmt.Sprintf("%s %s phase %s node %q (%s)", m.Name, m.Spec.Version, m.Status.Phase, m.Status.NodeRef.Name, strings.Join(conds, "; "))
}
