package csr

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// NodeUserPrefix is the username prefix of node credentials, and the common
// name prefix of kubelet certificates.
const NodeUserPrefix = "system:node:"

// NodesGroup is the organization of kubelet certificates and the group of
// node credentials.
const NodesGroup = "system:nodes"

// oidCommonName and oidOrganization are the only subject attributes a
// kubelet puts into its requests.
var (
	oidCommonName   = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidOrganization = asn1.ObjectIdentifier{2, 5, 4, 10}
)

// Usage sets kube-controller-manager accepts (pkg/apis/certificates
// helpers.go): with key encipherment for RSA keys, without it for others.
var (
	clientUsages       = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	clientUsagesNoRSA  = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	servingUsages      = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth}
	servingUsagesNoRSA = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
)

// ParseRequest decodes the PEM "CERTIFICATE REQUEST" of a CSR and checks its
// self-signature (proof that the requester holds the private key).
func ParseRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, rest := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("request is not a PEM CERTIFICATE REQUEST")
	}
	if b, _ := pem.Decode(rest); b != nil {
		return nil, errors.New("request holds more than one PEM block")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing certificate request: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("certificate request signature: %w", err)
	}
	return req, nil
}

// checkSubject requires exactly CN=system:node:<name>, O=system:nodes and
// nothing else. kube-controller-manager checks the organization and the CN
// prefix; we also refuse other attributes (OU, C, ...), which a kubelet never
// sends and which would end up in a certificate signed by the cluster CA.
func checkSubject(req *x509.CertificateRequest, nodeName string) error {
	if !slices.Equal(req.Subject.Organization, []string{NodesGroup}) {
		return fmt.Errorf("subject organization must be exactly [%s]", NodesGroup)
	}
	want := NodeUserPrefix + nodeName
	if req.Subject.CommonName != want {
		return fmt.Errorf("subject common name %q is not %q", req.Subject.CommonName, want)
	}
	for _, n := range req.Subject.Names {
		if !n.Type.Equal(oidCommonName) && !n.Type.Equal(oidOrganization) {
			return fmt.Errorf("subject carries attribute %s; only CN and O are allowed", n.Type)
		}
	}
	if len(req.Subject.ExtraNames) > 0 {
		return errors.New("subject carries extra attributes")
	}
	return nil
}

// usagesMatch reports whether got equals one of the sets, as sets
// (duplicates in got are refused: the API server rejects them anyway).
func usagesMatch(got []certificatesv1.KeyUsage, sets ...[]certificatesv1.KeyUsage) bool {
	seen := map[certificatesv1.KeyUsage]bool{}
	for _, u := range got {
		if seen[u] {
			return false
		}
		seen[u] = true
	}
	for _, want := range sets {
		if len(want) != len(seen) {
			continue
		}
		ok := true
		for _, u := range want {
			ok = ok && seen[u]
		}
		if ok {
			return true
		}
	}
	return false
}

// ValidateKubeletClient checks a kubelet client certificate request for
// nodeName the way kube-controller-manager's ValidateKubeletClientCSR does,
// and a little stricter (see checkSubject): O=system:nodes,
// CN=system:node:<nodeName>, no SANs of any kind, usages exactly digital
// signature + client auth (+ key encipherment).
func ValidateKubeletClient(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage, nodeName string) error {
	if err := checkSubject(req, nodeName); err != nil {
		return err
	}
	if len(req.DNSNames) > 0 || len(req.IPAddresses) > 0 || len(req.EmailAddresses) > 0 || len(req.URIs) > 0 {
		return errors.New("client certificate requests must not carry subject alternative names")
	}
	if !usagesMatch(usages, clientUsages, clientUsagesNoRSA) {
		return fmt.Errorf("usages %v are not %v", usages, clientUsages)
	}
	return nil
}

// NodeNames are the DNS names and IP addresses a node may have in its
// serving certificate.
type NodeNames struct {
	DNS []string
	IPs []net.IP
}

func (n NodeNames) hasDNS(name string) bool {
	for _, d := range n.DNS {
		if strings.EqualFold(d, name) {
			return true
		}
	}
	return false
}

func (n NodeNames) hasIP(ip net.IP) bool {
	for _, a := range n.IPs {
		if a.Equal(ip) {
			return true
		}
	}
	return false
}

// ErrUnknownSAN is wrapped by ValidateKubeletServing when a requested SAN is
// not among the node's names; the approver may wait for addresses to appear.
var ErrUnknownSAN = errors.New("subject alternative name is not one of the node's names or addresses")

// ValidateKubeletServing checks a kubelet serving certificate request for
// nodeName like kube-controller-manager's ValidateKubeletServingCSR (O,
// CN, at least one DNS or IP SAN, no email or URI SANs, usages digital
// signature + server auth (+ key encipherment)), and additionally requires
// every DNS and IP SAN to be one of allowed.
func ValidateKubeletServing(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage, nodeName string, allowed NodeNames) error {
	if err := checkSubject(req, nodeName); err != nil {
		return err
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return errors.New("serving certificate requests need at least one DNS or IP subject alternative name")
	}
	if len(req.EmailAddresses) > 0 || len(req.URIs) > 0 {
		return errors.New("serving certificate requests must not carry email or URI subject alternative names")
	}
	if !usagesMatch(usages, servingUsages, servingUsagesNoRSA) {
		return fmt.Errorf("usages %v are not %v", usages, servingUsages)
	}
	for _, d := range req.DNSNames {
		if !allowed.hasDNS(d) {
			return fmt.Errorf("DNS name %q: %w", d, ErrUnknownSAN)
		}
	}
	for _, ip := range req.IPAddresses {
		if !allowed.hasIP(ip) {
			return fmt.Errorf("IP address %s: %w", ip, ErrUnknownSAN)
		}
	}
	return nil
}
