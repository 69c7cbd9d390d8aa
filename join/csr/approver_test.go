package csr_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	csrutil "k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/csr"
	"anvil.dev/anvil/join/token"
)

var (
	clientUsages  = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	servingUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
)

// fixture is one Anvil Machine on one Host, with a token minted for it.
type fixture struct {
	ns      string
	host    *metalv1.Host
	machine *metalv1.Machine
	tok     token.Token
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "csr-"}}
	must(t, admin.Create(context.Background(), ns))
	t.Cleanup(func() { _ = admin.Delete(context.Background(), ns) })
	return ns.Name
}

// newFixture creates a Host, a MachineClass and a Machine named name (so
// its node is "name") holding the Host with addrs, and mints a bootstrap
// token for them the way Anvil does when the Host boots.
func newFixture(t *testing.T, name string, addrs ...metalv1.MachineAddress) *fixture {
	t.Helper()
	return newFixtureWith(t, name, nil, addrs...)
}

// newFixtureWith is newFixture with the Machine's spec.bootstrap.
func newFixtureWith(t *testing.T, name string, bootstrap *metalv1.MachineBootstrap, addrs ...metalv1.MachineAddress) *fixture {
	t.Helper()
	ctx := context.Background()
	ns := newNamespace(t)
	h := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-host"},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://rack1"}, BootMACs: []string{"52:54:00:00:10:01"}},
	}
	must(t, admin.Create(ctx, h))
	mc := &metalv1.MachineClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers"},
		Spec: metalv1.MachineClassSpec{
			Kernel:  metalv1.Artifact{URL: "kernel", SHA256: strings.Repeat("a", 64)},
			Initrds: []metalv1.Artifact{{URL: "initrd", SHA256: strings.Repeat("b", 64)}},
			Config:  metalv1.ConfigTemplate{Format: "butane", Variant: "fcos", Template: "variant: fcos\nversion: 1.5.0\n"},
		},
	}
	must(t, admin.Create(ctx, mc))
	m := &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "workers"}, Version: "v1.37.2", Bootstrap: bootstrap},
	}
	must(t, admin.Create(ctx, m))
	m.Status.HostRef = &metalv1.LocalObjectReference{Name: h.Name}
	m.Status.Addresses = addrs
	must(t, admin.Status().Update(ctx, m))
	tok, err := token.Mint(ctx, kube, token.MintOptions{Owner: token.Owner{
		Host:    token.ObjectRef{Namespace: ns, Name: h.Name, UID: h.UID},
		Machine: token.ObjectRef{Namespace: ns, Name: m.Name, UID: m.UID},
	}})
	must(t, err)
	t.Cleanup(func() { checkNoLeak(t, tok.Value()) })
	return &fixture{ns: ns, host: h, machine: m, tok: tok}
}

func clientset(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(cfg)
	must(t, err)
	return c
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	return k
}

// certRequest is one CSR to send.
type certRequest struct {
	subject pkix.Name
	dns     []string
	ips     []net.IP
	signer  string
	usages  []certificatesv1.KeyUsage
}

func nodeSubject(node string) pkix.Name {
	return pkix.Name{CommonName: csr.NodeUserPrefix + node, Organization: []string{csr.NodesGroup}}
}

// request sends cr as the kubelet's certificate manager does
// (client-go's util/certificate/csr, which kubelet TLS bootstrap uses).
func request(t *testing.T, c kubernetes.Interface, key crypto.Signer, cr certRequest) (string, types.UID) {
	t.Helper()
	der, err := certutil.MakeCSR(key, &cr.subject, cr.dns, cr.ips)
	must(t, err)
	// The API server's bootstrap-token authenticator reads Secrets through
	// an informer, so a token minted a moment ago may 401 until it has been
	// delivered; the kubelet retries the same way.
	var name string
	var uid types.UID
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		name, uid, err = csrutil.RequestCertificateWithContext(ctx, c, der, "", cr.signer, nil, cr.usages, key)
		if apierrors.IsUnauthorized(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("creating CSR: %v", err)
	}
	return name, uid
}

func waitSigned(t *testing.T, c kubernetes.Interface, name string, uid types.UID) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	crt, err := csrutil.WaitForCertificate(ctx, c, name, uid)
	if err != nil {
		got, _ := kube.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
		t.Fatalf("CSR %s not signed: %v; conditions %+v", name, err, got.Status.Conditions)
	}
	return crt
}

// certConfig is a client authenticating with a signed certificate.
func certConfig(t *testing.T, certPEM []byte, key crypto.Signer) *rest.Config {
	t.Helper()
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	must(t, err)
	return &rest.Config{Host: cp.Config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM(t), CertData: certPEM, KeyData: keyPEM}, Timeout: 15 * time.Second}
}

func whoAmI(t *testing.T, c kubernetes.Interface) authenticationv1.UserInfo {
	t.Helper()
	var r *authenticationv1.SelfSubjectReview
	// Retried on 401 for the same reason as request.
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		r, err = c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if apierrors.IsUnauthorized(err) {
			return false, nil
		}
		return err == nil, err
	})
	must(t, err)
	return r.Status.UserInfo
}

// assertPending checks that name carries no condition and no certificate.
func assertPending(t *testing.T, name string) {
	t.Helper()
	got, err := kube.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	must(t, err)
	if len(got.Status.Conditions) != 0 || len(got.Status.Certificate) != 0 {
		t.Fatalf("CSR %s should be pending untouched, has conditions %+v, certificate %d bytes", name, got.Status.Conditions, len(got.Status.Certificate))
	}
}

// csrEvents returns the Events about CSR name.
func csrEvents(t *testing.T, name string) []eventsv1.Event {
	t.Helper()
	l, err := kube.EventsV1().Events(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{})
	must(t, err)
	var out []eventsv1.Event
	for _, e := range l.Items {
		if e.Regarding.Kind == "CertificateSigningRequest" && e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func waitEvent(t *testing.T, name, reason string) eventsv1.Event {
	t.Helper()
	var found eventsv1.Event
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		for _, e := range csrEvents(t, name) {
			if e.Reason == reason {
				found = e
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s Event for CSR %s", reason, name)
	}
	return found
}

// checkNoLeak fails if a token secret shows up in the manager's log or in
// any Event.
func checkNoLeak(t *testing.T, bearer string) {
	_, secret, _ := strings.Cut(bearer, ".")
	if secret == "" {
		t.Fatal("token has no secret part")
	}
	if strings.Contains(managerLogs.String(), secret) {
		t.Errorf("a bootstrap token secret appears in the manager's log")
	}
	l, err := kube.EventsV1().Events(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Error(err)
		return
	}
	for _, e := range l.Items {
		if strings.Contains(e.Note, secret) {
			t.Errorf("a bootstrap token secret appears in Event %s", e.Name)
		}
	}
}

// TestKubeletBootstrapJoinsAsItsMachine walks a kubelet through TLS
// bootstrap with Anvil's token: its client CSR is approved by the Approver
// and signed by kube-controller-manager, the certificate authenticates as
// system:node:<name>, the Node authorizer and NodeRestriction let it create
// its own Node and no other, and it can renew its client certificate and get
// a serving certificate for its own addresses only.
func TestKubeletBootstrapJoinsAsItsMachine(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	f := newFixture(t, uniq("join"), metalv1.MachineAddress{Type: corev1.NodeInternalIP, Address: "192.0.2.10"})
	node := csr.NodeNameFor(f.machine)
	if node != f.machine.Name {
		t.Fatalf("NodeNameFor = %q, want the Machine's name", node)
	}

	boot := clientset(t, bearerConfig(t, f.tok.Value()))
	if u := whoAmI(t, boot); u.Username != f.tok.Username() {
		t.Fatalf("bootstrap token authenticates as %q", u.Username)
	}
	key := newKey(t)
	name, uid := request(t, boot, key, certRequest{subject: nodeSubject(node), signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: clientUsages})
	certPEM := waitSigned(t, boot, name, uid)
	got, err := kube.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	must(t, err)
	if c := got.Status.Conditions[0]; c.Type != certificatesv1.CertificateApproved || c.Reason != csr.ReasonApproved {
		t.Fatalf("first condition %+v, want Approved by anvil", c)
	}
	if e := waitEvent(t, name, csr.ReasonApproved); e.Related == nil || e.Related.Name != f.machine.Name || !strings.Contains(e.Note, node) {
		t.Fatalf("approval Event does not name the Machine and node: %+v", e)
	}

	nodeCfg := certConfig(t, certPEM, key)
	nc := clientset(t, nodeCfg)
	u := whoAmI(t, nc)
	if u.Username != "system:node:"+node || !slices.Contains(u.Groups, csr.NodesGroup) {
		t.Fatalf("node certificate authenticates as %q %v", u.Username, u.Groups)
	}
	// Its own Node: allowed. Another: refused by NodeRestriction.
	if _, err := nc.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("node cannot register itself: %v", err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	if _, err := nc.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "someone-else"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("creating another node's Node: err = %v, want Forbidden", err)
	}

	t.Run("renewal by the node itself", func(t *testing.T) {
		k2 := newKey(t)
		n, uid := request(t, nc, k2, certRequest{subject: nodeSubject(node), signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: clientUsages})
		renewed := waitSigned(t, nc, n, uid)
		if u := whoAmI(t, clientset(t, certConfig(t, renewed, k2))); u.Username != "system:node:"+node {
			t.Fatalf("renewed certificate authenticates as %q", u.Username)
		}
	})
	t.Run("renewal for another node name", func(t *testing.T) {
		// kube-apiserver 1.37's NodeRestriction refuses this before any
		// approver sees it; the Approver's own CN check (decideRenewal)
		// stays for API servers without it.
		der, err := certutil.MakeCSR(newKey(t), &pkix.Name{CommonName: "system:node:someone-else", Organization: []string{csr.NodesGroup}}, nil, nil)
		must(t, err)
		_, err = nc.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "renew-other-"},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
				SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName, Usages: clientUsages},
		}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("node creating a CSR for another node: err = %v, want Forbidden", err)
		}
	})

	// Serving certificates: names and addresses of this node only.
	tests := []struct {
		name     string
		dns      []string
		ips      []net.IP
		approved bool
	}{
		{"node name and Machine address", []string{node}, []net.IP{net.ParseIP("192.0.2.10")}, true},
		{"address reported by the Node", nil, []net.IP{net.ParseIP("192.0.2.50")}, true},
		{"address the node does not have", []string{node}, []net.IP{net.ParseIP("192.0.2.99")}, false},
		{"foreign DNS name", []string{"kubernetes.default.svc"}, nil, false},
	}
	// The kubelet reports its addresses in its Node's status.
	n, err := nc.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	must(t, err)
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.50"}}
	_, err = nc.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	must(t, err)
	for _, tc := range tests {
		t.Run("serving: "+tc.name, func(t *testing.T) {
			k := newKey(t)
			n, uid := request(t, nc, k, certRequest{subject: nodeSubject(node), dns: tc.dns, ips: tc.ips, signer: certificatesv1.KubeletServingSignerName, usages: servingUsages})
			if !tc.approved {
				waitLog(t, "CSR undecided", "csr="+n)
				assertPending(t, n)
				return
			}
			crtPEM := waitSigned(t, nc, n, uid)
			blk, _ := pem.Decode(crtPEM)
			crt, err := x509.ParseCertificate(blk.Bytes)
			must(t, err)
			if !slices.Contains(crt.ExtKeyUsage, x509.ExtKeyUsageServerAuth) || len(crt.IPAddresses) != len(tc.ips) {
				t.Fatalf("serving certificate: usages %v, IPs %v", crt.ExtKeyUsage, crt.IPAddresses)
			}
		})
	}
}

// TestBootstrapCSRsThatDoNotMatchStayPending sends requests with an Anvil
// token that must not be approved: each stays pending without any
// condition, with a Warning Event saying why. The same token still gets its
// one correct request approved afterwards.
func TestBootstrapCSRsThatDoNotMatchStayPending(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	f := newFixture(t, uniq("bad"))
	node := csr.NodeNameFor(f.machine)
	boot := clientset(t, bearerConfig(t, f.tok.Value()))

	// A token minted for an earlier Machine of the same name (other UID).
	stale, err := token.Mint(ctx, kube, token.MintOptions{Owner: token.Owner{
		Machine: token.ObjectRef{Namespace: f.ns, Name: f.machine.Name, UID: "0b7c8f43-0000-0000-0000-000000000000"},
	}})
	must(t, err)
	t.Cleanup(func() { checkNoLeak(t, stale.Value()) })
	staleBoot := clientset(t, bearerConfig(t, stale.Value()))

	kubeletClient := certificatesv1.KubeAPIServerClientKubeletSignerName
	tests := []struct {
		name   string
		client kubernetes.Interface
		req    certRequest
		why    string // part of the Event
	}{
		{"another node name", boot, certRequest{subject: nodeSubject(uniq("bad")), signer: kubeletClient, usages: clientUsages}, `is not "system:node:` + node + `"`},
		{"extra DNS name", boot, certRequest{subject: nodeSubject(node), dns: []string{node + ".example"}, signer: kubeletClient, usages: clientUsages}, "subject alternative names"},
		{"extra IP address", boot, certRequest{subject: nodeSubject(node), ips: []net.IP{net.ParseIP("192.0.2.1")}, signer: kubeletClient, usages: clientUsages}, "subject alternative names"},
		{"extra organization", boot, certRequest{subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{csr.NodesGroup, "system:masters"}}, signer: kubeletClient, usages: clientUsages}, "organization"},
		{"extra subject attribute", boot, certRequest{subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{csr.NodesGroup}, OrganizationalUnit: []string{"ops"}}, signer: kubeletClient, usages: clientUsages}, "only CN and O"},
		{"server auth usage", boot, certRequest{subject: nodeSubject(node), signer: kubeletClient, usages: append(slices.Clone(clientUsages), certificatesv1.UsageServerAuth)}, "usages"},
		{"token of an earlier Machine", staleBoot, certRequest{subject: nodeSubject(node), signer: kubeletClient, usages: clientUsages}, "earlier Machine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, _ := request(t, tc.client, newKey(t), tc.req)
			e := waitEvent(t, n, csr.ReasonNotApproved)
			if e.Type != corev1.EventTypeWarning || !strings.Contains(e.Note, tc.why) {
				t.Fatalf("Event %s %q, want a Warning containing %q", e.Type, e.Note, tc.why)
			}
			assertPending(t, n)
		})
	}

	key := newKey(t)
	n, uid := request(t, boot, key, certRequest{subject: nodeSubject(node), signer: kubeletClient, usages: clientUsages})
	waitSigned(t, boot, n, uid)
}

// TestOthersRequestsAreLeftAlone: requests Anvil has no say in get no
// condition and no Event, even when the node name is one of Anvil's.
func TestOthersRequestsAreLeftAlone(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	f := newFixture(t, uniq("alone"))
	node := csr.NodeNameFor(f.machine)

	// A bootstrap token Anvil did not mint (as kubeadm would create one),
	// with its own group allowed to create CSRs.
	raw, err := bootstraputil.GenerateBootstrapToken()
	must(t, err)
	id, secret, _ := strings.Cut(raw, ".")
	const group = "system:bootstrappers:other"
	must(t, admin.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: bootstrapapi.BootstrapTokenSecretPrefix + id},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey: id, bootstrapapi.BootstrapTokenSecretKey: secret,
			bootstrapapi.BootstrapTokenUsageAuthentication: "true", bootstrapapi.BootstrapTokenExtraGroupsKey: group,
		},
	}))
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "other-bootstrappers-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}},
	}
	must(t, admin.Create(ctx, crb))
	t.Cleanup(func() { _ = admin.Delete(context.Background(), crb) })
	foreign := clientset(t, bearerConfig(t, id+"."+secret))

	// A node that is no Anvil Machine's, with a certificate from the CA.
	strangerKey := newKey(t)
	strangerName := uniq("stranger")
	strangerCert := signWithCA(t, strangerKey, nodeSubject(strangerName))
	stranger := clientset(t, certConfig(t, strangerCert, strangerKey))

	adminCS := kube
	tests := []struct {
		name   string
		client kubernetes.Interface
		req    certRequest
	}{
		{"foreign bootstrap token, Anvil's node name", foreign, certRequest{subject: nodeSubject(node), signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: clientUsages}},
		{"renewal by a node that is not Anvil's", stranger, certRequest{subject: nodeSubject(strangerName), signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: clientUsages}},
		{"serving certificate of a node that is not Anvil's", stranger, certRequest{subject: nodeSubject(strangerName), dns: []string{strangerName}, signer: certificatesv1.KubeletServingSignerName, usages: servingUsages}},
		{"another signer", adminCS, certRequest{subject: nodeSubject(node), signer: certificatesv1.KubeAPIServerClientSignerName, usages: clientUsages}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, _ := request(t, tc.client, newKey(t), tc.req)
			waitLog(t, "leaving CSR to other approvers", "csr="+n)
			assertPending(t, n)
			if ev := csrEvents(t, n); len(ev) != 0 {
				t.Fatalf("Anvil recorded Events about a request it does not judge: %+v", ev)
			}
		})
	}
	checkNoLeak(t, id+"."+secret)
}

// signWithCA issues a client certificate from the control plane's CA, as
// an earlier bootstrap outside Anvil would have.
func signWithCA(t *testing.T, key crypto.Signer, subj pkix.Name) []byte {
	t.Helper()
	caCert, err := certutil.CertsFromFile(cp.CACert)
	must(t, err)
	caKeyAny, err := keyutil.PrivateKeyFromFile(cp.CAKey)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: bigSerial(t),
		Subject:      subj,
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert[0], key.Public(), caKeyAny.(crypto.Signer))
	must(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func bigSerial(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	must(t, err)
	return n
}

// uniq returns prefix with a random suffix: node names are cluster-wide and
// the control plane outlives one run under -count.
func uniq(prefix string) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return fmt.Sprintf("%s-%x", prefix, b)
}

// TestBootstrapDataMachinesAreLeftAlone: the kubelet of a Machine with
// Cluster API bootstrap data joins with kubeadm's credentials, and that
// cluster's own approvers decide its CSRs. Anvil approves none of them and
// holds none (no Event), even for its node name and a token naming it.
func TestBootstrapDataMachinesAreLeftAlone(t *testing.T) {
	needControlPlane(t)
	f := newFixtureWith(t, uniq("capi"), &metalv1.MachineBootstrap{DataSecretName: "capi-bootstrap"},
		metalv1.MachineAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.7"})
	node := csr.NodeNameFor(f.machine)
	key := newKey(t)
	nodeCS := clientset(t, certConfig(t, signWithCA(t, key, nodeSubject(node)), key))
	tests := []struct {
		name   string
		client kubernetes.Interface
		req    certRequest
	}{
		// First: Anvil waits for a token's Machine to reach its cache, so
		// once this one is decided the node-name cases see the Machine too.
		{"bootstrap token naming the Machine", clientset(t, bearerConfig(t, f.tok.Value())),
			certRequest{subject: nodeSubject(node), signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: clientUsages}},
		{"client certificate renewal", nodeCS, certRequest{subject: nodeSubject(node), signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: clientUsages}},
		{"serving certificate", nodeCS, certRequest{subject: nodeSubject(node), dns: []string{node}, ips: []net.IP{net.ParseIP("10.0.0.7")},
			signer: certificatesv1.KubeletServingSignerName, usages: servingUsages}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, _ := request(t, tc.client, newKey(t), tc.req)
			waitLog(t, "leaving CSR to other approvers", "csr="+n, "Cluster API bootstrap data (spec.bootstrap)")
			assertPending(t, n)
			if ev := csrEvents(t, n); len(ev) != 0 {
				t.Fatalf("Anvil recorded Events about a request it does not judge: %+v", ev)
			}
		})
	}
}
