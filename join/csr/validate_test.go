package csr_test

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/csr"
)

func makeRequest(t *testing.T, tmpl *x509.CertificateRequest) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(nil, tmpl, newKey(t))
	must(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestValidateKubeletClient(t *testing.T) {
	subj := nodeSubject("n1")
	withKE := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	tests := []struct {
		name    string
		req     x509.CertificateRequest
		usages  []certificatesv1.KeyUsage
		wantErr string // "" = valid
	}{
		{"kubelet's request", x509.CertificateRequest{Subject: subj}, clientUsages, ""},
		{"with key encipherment (RSA kubelets)", x509.CertificateRequest{Subject: subj}, withKE, ""},
		{"usages in another order", x509.CertificateRequest{Subject: subj}, []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature}, ""},
		{"other node", x509.CertificateRequest{Subject: nodeSubject("n2")}, clientUsages, "common name"},
		{"CN without prefix", x509.CertificateRequest{Subject: pkix.Name{CommonName: "n1", Organization: []string{"system:nodes"}}}, clientUsages, "common name"},
		{"no organization", x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1"}}, clientUsages, "organization"},
		{"system:masters too", x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes", "system:masters"}}}, clientUsages, "organization"},
		{"OU", x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}, OrganizationalUnit: []string{"x"}}}, clientUsages, "only CN and O"},
		{"extra name", x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}, ExtraNames: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier{2, 5, 4, 5}, Value: "1"}}}}, clientUsages, "only CN and O"},
		{"DNS SAN", x509.CertificateRequest{Subject: subj, DNSNames: []string{"n1"}}, clientUsages, "subject alternative"},
		{"IP SAN", x509.CertificateRequest{Subject: subj, IPAddresses: []net.IP{net.ParseIP("192.0.2.1")}}, clientUsages, "subject alternative"},
		{"email SAN", x509.CertificateRequest{Subject: subj, EmailAddresses: []string{"a@example.org"}}, clientUsages, "subject alternative"},
		{"URI SAN", x509.CertificateRequest{Subject: subj, URIs: []*url.URL{{Scheme: "spiffe", Host: "x"}}}, clientUsages, "subject alternative"},
		{"server auth too", x509.CertificateRequest{Subject: subj}, append(clientUsages[:2:2], certificatesv1.UsageServerAuth), "usages"},
		{"missing client auth", x509.CertificateRequest{Subject: subj}, []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}, "usages"},
		{"duplicate usage", x509.CertificateRequest{Subject: subj}, []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth, certificatesv1.UsageClientAuth}, "usages"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := csr.ParseRequest(makeRequest(t, &tc.req))
			must(t, err)
			err = csr.ValidateKubeletClient(x, tc.usages, "n1")
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestValidateKubeletServing(t *testing.T) {
	allowed := csr.NodeNames{DNS: []string{"n1", "n1.lab.example"}, IPs: []net.IP{net.ParseIP("192.0.2.10"), net.ParseIP("2001:db8::10")}}
	subj := nodeSubject("n1")
	tests := []struct {
		name    string
		req     x509.CertificateRequest
		usages  []certificatesv1.KeyUsage
		wantErr string
		unknown bool // the error is ErrUnknownSAN
	}{
		{"own names and addresses", x509.CertificateRequest{Subject: subj, DNSNames: []string{"N1.lab.example"}, IPAddresses: []net.IP{net.ParseIP("192.0.2.10"), net.ParseIP("2001:db8::10")}}, servingUsages, "", false},
		{"no SAN", x509.CertificateRequest{Subject: subj}, servingUsages, "at least one", false},
		{"foreign IP", x509.CertificateRequest{Subject: subj, IPAddresses: []net.IP{net.ParseIP("192.0.2.11")}}, servingUsages, "192.0.2.11", true},
		{"foreign DNS", x509.CertificateRequest{Subject: subj, DNSNames: []string{"kubernetes"}}, servingUsages, "kubernetes", true},
		{"email SAN", x509.CertificateRequest{Subject: subj, DNSNames: []string{"n1"}, EmailAddresses: []string{"a@example.org"}}, servingUsages, "email", false},
		{"client usages", x509.CertificateRequest{Subject: subj, DNSNames: []string{"n1"}}, clientUsages, "usages", false},
		{"other node", x509.CertificateRequest{Subject: nodeSubject("n2"), DNSNames: []string{"n1"}}, servingUsages, "common name", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := csr.ParseRequest(makeRequest(t, &tc.req))
			must(t, err)
			err = csr.ValidateKubeletServing(x, tc.usages, "n1", allowed)
			checkErr(t, err, tc.wantErr)
			if errors.Is(err, csr.ErrUnknownSAN) != tc.unknown {
				t.Fatalf("errors.Is(err, ErrUnknownSAN) = %v, want %v", !tc.unknown, tc.unknown)
			}
		})
	}
}

func TestParseRequest(t *testing.T) {
	good := makeRequest(t, &x509.CertificateRequest{Subject: nodeSubject("n1")})
	blk, _ := pem.Decode(good)
	tampered := append([]byte(nil), blk.Bytes...)
	tampered[len(tampered)-5] ^= 0xff // inside the signature
	tests := []struct {
		name    string
		in      []byte
		wantErr string
	}{
		{"valid", good, ""},
		{"not PEM", []byte("hello"), "not a PEM"},
		{"wrong block type", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: blk.Bytes}), "not a PEM"},
		{"two blocks", append(append([]byte(nil), good...), good...), "more than one"},
		{"bad signature", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: tampered}), "signature"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := csr.ParseRequest(tc.in)
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestNodeNameFor(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        string
	}{
		{"machine name", nil, "worker-7"},
		{"annotation", map[string]string{csr.AnnotationNodeName: "rack7-u12.lab"}, "rack7-u12.lab"},
		{"invalid annotation ignored", map[string]string{csr.AnnotationNodeName: "Not_A_Name"}, "worker-7"},
		{"empty annotation ignored", map[string]string{csr.AnnotationNodeName: ""}, "worker-7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "worker-7", Annotations: tc.annotations}}
			if got := csr.NodeNameFor(m); got != tc.want {
				t.Fatalf("NodeNameFor = %q, want %q", got, tc.want)
			}
		})
	}
	if csr.NodeNameFor(nil) != "" {
		t.Fatal("NodeNameFor(nil) should be empty")
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q does not contain %q", err, want)
	}
}
