// Package csr approves the certificate signing requests of kubelets on the
// Machines Anvil booted, and only those.
//
// A kubelet joins with a bootstrap token Anvil minted for one Machine
// (join/token records the owner on the token's Secret). Its client CSR is
// approved when the node name in the request is exactly the one that Machine
// must have (NodeNameFor). Later renewals by the node itself, and serving
// certificates whose names and addresses belong to the node, are approved as
// well. kube-controller-manager's csrsigning controller then signs approved
// requests; Anvil never holds the CA key.
//
// Anything that is not Anvil's to judge (other signers, tokens Anvil did not
// mint, nodes that are not Anvil's Machines, and those of Machines with
// Cluster API bootstrap data, spec.bootstrap, whose cluster's own approvers
// decide) is left untouched for other approvers. Requests that are Anvil's but do not match are not approved
// either: they stay pending, with a Warning Event saying why, so that a
// spoofed join fails loudly instead of joining silently.
//
// # Why no SubjectAccessReview
//
// kube-controller-manager's approver asks the API server (a SubjectAccessReview
// on certificatesigningrequests/nodeclient) whether the requester may get any
// node client certificate; the node name is not part of that question. Anvil's
// rule is about a relation RBAC cannot express: this token belongs to this
// Machine, whose node has this name. Consulting RBAC as well would add
// nothing, and the grant it needs (nodeclient for the bootstrap group) would
// make upstream's approver, where it runs, approve any node name for any of
// Anvil's tokens, which is exactly the hole this package closes. The policy
// therefore lives here, and the bootstrap group is granted no more than
// creating CSRs (BootstrapClusterRoleBinding).
package csr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/cluster"
	"anvil.dev/anvil/join/token"
)

// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,resourceNames=kubernetes.io/kube-apiserver-client-kubelet;kubernetes.io/kubelet-serving,verbs=approve
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machines,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get
// +kubebuilder:rbac:groups="",namespace=kube-system,resources=secrets,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Defaults of Approver.
const (
	DefaultRetryInterval = 10 * time.Second
	DefaultMaxPendingAge = time.Hour
)

// Event and condition reasons.
const (
	ReasonApproved    = "AnvilApproved"
	ReasonNotApproved = "NotApproved"
)

// Approver reconciles CertificateSigningRequests.
type Approver struct {
	// Client reads CSRs and Machines from the manager's cache and writes
	// approvals.
	Client client.Client
	// CSRClient, if set, reads and approves the CSRs instead of Client:
	// the approver of a target cluster decides that cluster's CSRs against
	// the management cluster's Machines.
	CSRClient client.Client
	// Targets, if set, gets a hook that runs one approver per target
	// cluster (MachineClass spec.join.kubeconfigSecretRef): bootstrap
	// tokens for those Machines are minted there, so their CSRs are there.
	Targets *cluster.Registry
	// APIReader reads Nodes uncached (serving CSRs are rare; caching every
	// Node of a large cluster for them is not worth it).
	APIReader client.Reader
	// Kube looks up bootstrap tokens (join/token).
	Kube     kubernetes.Interface
	Recorder events.EventRecorder
	// MachineAddressesOnly restricts serving-certificate SANs to the node
	// name and the Machine's status.addresses. By default the Node's own
	// status.addresses count too; those are reported by the kubelet itself
	// (NodeRestriction lets a node edit its own status), so a compromised
	// node could name any address there.
	MachineAddressesOnly bool
	// RetryInterval is how often an undecidable request (its Machine not
	// in the cache yet, a SAN the node does not have yet) is looked at again.
	RetryInterval time.Duration
	// MaxPendingAge stops those retries for requests older than this.
	MaxPendingAge time.Duration
	// MaxConcurrentReconciles bounds the workers (default 2).
	MaxConcurrentReconciles int
	// Now returns the current time (time.Now if nil).
	Now func() time.Time
}

// verdict is what to do with a request.
type verdict int

const (
	// ignore: not Anvil's request; no condition, no Event.
	ignore verdict = iota
	// approve it.
	approve
	// hold: Anvil's request, and it does not match. Not approved, Warning.
	hold
	// wait: Anvil's request, not decidable yet; look again later.
	wait
)

type decision struct {
	verdict verdict
	message string
	machine *metalv1.Machine
	node    string
}

func ignored(format string, args ...any) decision {
	return decision{verdict: ignore, message: fmt.Sprintf(format, args...)}
}

func held(m *metalv1.Machine, format string, args ...any) decision {
	return decision{verdict: hold, machine: m, message: fmt.Sprintf(format, args...)}
}

func waiting(m *metalv1.Machine, format string, args ...any) decision {
	return decision{verdict: wait, machine: m, message: fmt.Sprintf(format, args...)}
}

// Reconcile decides one CSR.
func (r *Approver) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := r.csrs().Get(ctx, req.NamespacedName, csr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if finished(csr) {
		return ctrl.Result{}, nil
	}
	d, err := r.decide(ctx, csr)
	if err != nil {
		return ctrl.Result{}, err
	}
	// The username of a bootstrap token holds only its public ID.
	kv := []any{"csr", csr.Name, "signer", csr.Spec.SignerName, "username", csr.Spec.Username}
	if d.machine != nil {
		kv = append(kv, "machine", d.machine.Namespace+"/"+d.machine.Name)
	}
	switch d.verdict {
	case ignore:
		log.V(1).Info("leaving CSR to other approvers", append(kv, "why", d.message)...)
		return ctrl.Result{}, nil
	case wait:
		if age := r.now().Sub(csr.CreationTimestamp.Time); age > r.maxPendingAge() {
			log.Info("CSR not approved: gave up waiting", append(kv, "why", d.message)...)
			r.event(csr, d, "Warning", "not approved after %s: %s", r.maxPendingAge(), d.message)
			return ctrl.Result{}, nil
		}
		log.V(1).Info("CSR undecided, looking again later", append(kv, "why", d.message)...)
		return ctrl.Result{RequeueAfter: r.retryInterval()}, nil
	case hold:
		log.Info("CSR not approved", append(kv, "why", d.message)...)
		r.event(csr, d, "Warning", "%s", d.message)
		return ctrl.Result{}, nil
	}

	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type:    certificatesv1.CertificateApproved,
		Status:  corev1.ConditionTrue,
		Reason:  ReasonApproved,
		Message: d.message,
	})
	if err := r.csrs().SubResource("approval").Update(ctx, csr); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("approving CSR %s: %w", csr.Name, err)
	}
	log.Info("CSR approved", append(kv, "node", d.node, "why", d.message)...)
	r.event(csr, d, "Normal", "%s", d.message)
	return ctrl.Result{}, nil
}

// decide applies the policy in the package comment.
func (r *Approver) decide(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (decision, error) {
	user := csr.Spec.Username
	switch csr.Spec.SignerName {
	case certificatesv1.KubeAPIServerClientKubeletSignerName:
		if id, ok := token.IDFromUsername(user); ok {
			return r.decideBootstrap(ctx, csr, id)
		}
		if node, ok := strings.CutPrefix(user, NodeUserPrefix); ok {
			return r.decideRenewal(ctx, csr, node)
		}
		return ignored("requester is neither a bootstrap token nor a node"), nil
	case certificatesv1.KubeletServingSignerName:
		if node, ok := strings.CutPrefix(user, NodeUserPrefix); ok {
			return r.decideServing(ctx, csr, node)
		}
		return ignored("serving certificate not requested by a node"), nil
	}
	return ignored("signer %s is not a kubelet signer", csr.Spec.SignerName), nil
}

// decideBootstrap: the first client certificate, requested with a bootstrap
// token. Approved only for the node name of the token's Machine.
func (r *Approver) decideBootstrap(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, id string) (decision, error) {
	info, err := token.Lookup(ctx, r.Kube, id)
	switch {
	case errors.Is(err, token.ErrNotManaged), errors.Is(err, token.ErrInvalidID):
		return ignored("bootstrap token %s was not minted by anvil", id), nil
	case errors.Is(err, token.ErrNotFound):
		// Revoked (its node joined, or a newer boot replaced it) or expired
		// and cleaned up. Whoever minted it, it vouches for nothing now.
		return ignored("bootstrap token %s no longer exists", id), nil
	case err != nil:
		return decision{}, err
	}
	if !slices.Contains(csr.Spec.Groups, bootstrapapi.BootstrapDefaultGroup) {
		return held(nil, "requester %s is not in group %s", csr.Spec.Username, bootstrapapi.BootstrapDefaultGroup), nil
	}
	owner := info.Owner.Machine
	if owner.Name == "" || owner.Namespace == "" {
		return held(nil, "bootstrap token %s names no Machine", id), nil
	}
	m := &metalv1.Machine{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: owner.Namespace, Name: owner.Name}, m); err != nil {
		if apierrors.IsNotFound(err) {
			// Possibly a cache that has not seen a new Machine yet.
			return waiting(nil, "Machine %s of bootstrap token %s not found", owner, id), nil
		}
		return decision{}, err
	}
	if m.Spec.Bootstrap != nil {
		return ignored("%s", bootstrapDataWhy(m)), nil
	}
	switch {
	case owner.UID != "" && owner.UID != m.UID:
		return held(m, "bootstrap token %s was minted for an earlier Machine named %s", id, owner), nil
	case m.DeletionTimestamp != nil:
		return held(m, "Machine %s is being deleted", owner), nil
	case info.Owner.Host.Name != "" && m.Status.HostRef != nil && m.Status.HostRef.Name != info.Owner.Host.Name:
		return held(m, "bootstrap token %s was minted for Host %s, Machine %s now holds Host %s", id, info.Owner.Host.Name, owner, m.Status.HostRef.Name), nil
	}
	node := NodeNameFor(m)
	x, err := ParseRequest(csr.Spec.Request)
	if err != nil {
		return held(m, "%v", err), nil
	}
	if err := ValidateKubeletClient(x, csr.Spec.Usages, node); err != nil {
		return held(m, "kubelet client certificate for Machine %s (node %q): %v", owner, node, err), nil
	}
	return decision{verdict: approve, machine: m, node: node,
		message: fmt.Sprintf("kubelet client certificate for node %q of Machine %s, requested with its bootstrap token %s", node, owner, id)}, nil
}

// decideRenewal: a node renewing its own client certificate with the one it
// has. Only for nodes of Anvil's Machines.
func (r *Approver) decideRenewal(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, node string) (decision, error) {
	m, d, err := r.machineForNode(ctx, node)
	if m == nil || err != nil {
		return d, err
	}
	if !slices.Contains(csr.Spec.Groups, NodesGroup) {
		return held(m, "requester %s is not in group %s", csr.Spec.Username, NodesGroup), nil
	}
	x, err := ParseRequest(csr.Spec.Request)
	if err != nil {
		return held(m, "%v", err), nil
	}
	if err := ValidateKubeletClient(x, csr.Spec.Usages, node); err != nil {
		return held(m, "kubelet client certificate renewal by node %q: %v", node, err), nil
	}
	return decision{verdict: approve, machine: m, node: node,
		message: fmt.Sprintf("kubelet client certificate renewal by node %q of Machine %s/%s", node, m.Namespace, m.Name)}, nil
}

// decideServing: a node's serving certificate, for its own names and
// addresses only.
func (r *Approver) decideServing(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, node string) (decision, error) {
	m, d, err := r.machineForNode(ctx, node)
	if m == nil || err != nil {
		return d, err
	}
	if !slices.Contains(csr.Spec.Groups, NodesGroup) {
		return held(m, "requester %s is not in group %s", csr.Spec.Username, NodesGroup), nil
	}
	x, err := ParseRequest(csr.Spec.Request)
	if err != nil {
		return held(m, "%v", err), nil
	}
	names := NodeNames{DNS: []string{node}}
	addMachineAddresses(&names, m.Status.Addresses)
	if !r.MachineAddressesOnly {
		n := &corev1.Node{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Name: node}, n)
		switch {
		case err == nil:
			addNodeAddresses(&names, n.Status.Addresses)
		case !apierrors.IsNotFound(err):
			return decision{}, err
		}
	}
	if err := ValidateKubeletServing(x, csr.Spec.Usages, node, names); err != nil {
		if errors.Is(err, ErrUnknownSAN) {
			// The addresses may not be reported yet.
			return waiting(m, "kubelet serving certificate for node %q: %v", node, err), nil
		}
		return held(m, "kubelet serving certificate for node %q: %v", node, err), nil
	}
	return decision{verdict: approve, machine: m, node: node,
		message: fmt.Sprintf("kubelet serving certificate for node %q of Machine %s/%s, names %v, addresses %v", node, m.Namespace, m.Name, x.DNSNames, x.IPAddresses)}, nil
}

// machineForNode finds the one Machine whose node is named node. A nil
// Machine comes with the decision to return.
func (r *Approver) machineForNode(ctx context.Context, node string) (*metalv1.Machine, decision, error) {
	var list metalv1.MachineList
	if err := r.Client.List(ctx, &list, client.MatchingFields{IndexMachineNodeName: node}); err != nil {
		return nil, decision{}, err
	}
	ours := list.Items[:0]
	var skipped *metalv1.Machine
	for i := range list.Items {
		if list.Items[i].Spec.Bootstrap != nil {
			skipped = list.Items[i].DeepCopy()
			continue
		}
		ours = append(ours, list.Items[i])
	}
	switch {
	case len(ours) == 0 && skipped != nil:
		return nil, ignored("node %q: %s", node, bootstrapDataWhy(skipped)), nil
	case len(ours) == 0:
		return nil, ignored("node %q is not a node of an anvil Machine", node), nil
	case len(ours) == 1:
		return &ours[0], decision{}, nil
	}
	names := make([]string, 0, len(ours))
	for _, m := range ours {
		names = append(names, m.Namespace+"/"+m.Name)
	}
	return nil, held(nil, "node name %q is claimed by several Machines: %s", node, strings.Join(names, ", ")), nil
}

// bootstrapDataWhy: a Machine with Cluster API bootstrap data
// (spec.bootstrap) joins with credentials Anvil did not mint, and its
// cluster's own approvers (kubeadm's RBAC auto-approval) decide its
// kubelet's CSRs; Anvil neither approves nor holds them.
func bootstrapDataWhy(m *metalv1.Machine) string {
	return fmt.Sprintf("Machine %s/%s boots with Cluster API bootstrap data (spec.bootstrap): its cluster's own approvers decide its kubelet's CSRs", m.Namespace, m.Name)
}

func addMachineAddresses(n *NodeNames, addrs []metalv1.MachineAddress) {
	for _, a := range addrs {
		addAddress(n, a.Type, a.Address)
	}
}

func addNodeAddresses(n *NodeNames, addrs []corev1.NodeAddress) {
	for _, a := range addrs {
		addAddress(n, a.Type, a.Address)
	}
}

func addAddress(n *NodeNames, t corev1.NodeAddressType, v string) {
	switch t {
	case corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeExternalDNS:
		n.DNS = append(n.DNS, v)
	case corev1.NodeInternalIP, corev1.NodeExternalIP:
		if ip := net.ParseIP(v); ip != nil {
			n.IPs = append(n.IPs, ip)
		}
	}
}

// finished: approved, denied, failed or signed already; nothing to decide.
func finished(csr *certificatesv1.CertificateSigningRequest) bool {
	if len(csr.Status.Certificate) > 0 {
		return true
	}
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			return true
		}
	}
	return false
}

func (r *Approver) event(csr *certificatesv1.CertificateSigningRequest, d decision, typ, format string, args ...any) {
	if r.Recorder == nil {
		return
	}
	reason := ReasonApproved
	if d.verdict != approve {
		reason = ReasonNotApproved
	}
	if d.machine != nil { // a typed nil would be a non-nil runtime.Object
		r.Recorder.Eventf(csr, d.machine, typ, reason, "Approve", format, args...)
		return
	}
	r.Recorder.Eventf(csr, nil, typ, reason, "Approve", format, args...)
}

func (r *Approver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Approver) retryInterval() time.Duration {
	if r.RetryInterval > 0 {
		return r.RetryInterval
	}
	return DefaultRetryInterval
}

func (r *Approver) maxPendingAge() time.Duration {
	if r.MaxPendingAge > 0 {
		return r.MaxPendingAge
	}
	return DefaultMaxPendingAge
}

// AddIndexes registers IndexMachineNodeName. SetupWithManager calls it; call
// it yourself only when not setting up the Approver on that manager.
func AddIndexes(ctx context.Context, mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(ctx, &metalv1.Machine{}, IndexMachineNodeName, IndexMachineNodeNameFunc)
}

// SetupWithManager registers the index and the controller.
func (r *Approver) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if r.Kube == nil || r.Client == nil || r.APIReader == nil {
		return errors.New("csr approver: Client, APIReader and Kube are required")
	}
	if err := AddIndexes(ctx, mgr); err != nil {
		return err
	}
	if r.Targets != nil {
		r.Targets.AddHook(r.approveInTarget)
	}
	open := predicate.NewPredicateFuncs(func(o client.Object) bool {
		c, ok := o.(*certificatesv1.CertificateSigningRequest)
		return ok && !finished(c)
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(open)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.workers()}).
		Named("csr-approver").
		Complete(r)
}
