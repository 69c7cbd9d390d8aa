package render

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strconv"
)

// Vars are the per-host values a template is executed with. Templates see them
// as the dot (`{{ .Hostname }}`, `{{ .Join.Token }}`, `{{ index .Labels "rack" }}`).
//
// Join.Token, Agent.Credential and every value of SecretExtra are secrets: they
// may appear in the rendered config (that is their purpose) but never in an
// error returned by this package.
type Vars struct {
	Hostname      string            `json:"hostname"`
	MACs          []string          `json:"macs"`
	Addresses     []string          `json:"addresses"`
	FailureDomain string            `json:"failureDomain"`
	Labels        map[string]string `json:"labels"`
	Join          Join              `json:"join"`
	Agent         Agent             `json:"agent"`
	// Extra holds free-form, non-secret values (for example from the MachineClass).
	Extra map[string]string `json:"extra"`
	// SecretExtra holds free-form secret values; they are scrubbed from errors
	// like the token and the agent credential.
	SecretExtra map[string]string `json:"secretExtra"`
}

// Join holds what the kubelet needs to join the cluster.
type Join struct {
	APIServerEndpoint string `json:"apiServerEndpoint"`
	// Token is a kubelet bootstrap token "<id>.<secret>" (secret).
	Token string `json:"token"`
	// CACertHash is kubeadm's "sha256:<hex of the CA's SubjectPublicKeyInfo>".
	CACertHash     string `json:"caCertHash"`
	CACertPEM      string `json:"caCertPEM"`
	NodeName       string `json:"nodeName"`
	ProviderID     string `json:"providerID"`
	KubeletVersion string `json:"kubeletVersion"`
	KubeletURL     string `json:"kubeletURL"`
	KubeletSHA256  string `json:"kubeletSHA256"`
}

// Agent tells the anvil-agent where to report and how to authenticate.
type Agent struct {
	Endpoint string `json:"endpoint"`
	// Credential is the agent's credential (secret).
	Credential string `json:"credential"`
}

// secrets returns the secret values in vars together with the encodings a
// template or a parser might echo them in (JSON-escaped, base64, URL-escaped,
// Go-quoted), so that a scrubber can remove every form.
func (v *Vars) secrets() []string {
	raw := []string{v.Join.Token, v.Agent.Credential}
	for _, s := range v.SecretExtra {
		raw = append(raw, s)
	}
	var out []string
	for _, s := range raw {
		if s == "" {
			continue
		}
		out = append(out, s)
		if b, err := json.Marshal(s); err == nil {
			out = append(out, string(b[1:len(b)-1]))
		}
		q := strconv.Quote(s)
		out = append(out, q[1:len(q)-1],
			base64.StdEncoding.EncodeToString([]byte(s)),
			base64.RawStdEncoding.EncodeToString([]byte(s)),
			base64.URLEncoding.EncodeToString([]byte(s)),
			base64.RawURLEncoding.EncodeToString([]byte(s)),
			url.QueryEscape(s),
			url.PathEscape(s),
		)
	}
	return out
}

// SampleVars returns plausible values for every field, used by Validate to
// check a template before any host boots with it. The secrets are fixed
// placeholders in the right format, not real credentials.
func SampleVars() Vars {
	return Vars{
		Hostname:      "sample-host",
		MACs:          []string{"52:54:00:00:00:01", "52:54:00:00:00:02"},
		Addresses:     []string{"192.0.2.10"},
		FailureDomain: "sample-zone",
		Labels:        map[string]string{},
		Join: Join{
			APIServerEndpoint: "https://192.0.2.1:6443",
			Token:             "sample.0000000000000000",
			CACertHash:        "sha256:0000000000000000000000000000000000000000000000000000000000000000",
			CACertPEM:         sampleCAPEM,
			NodeName:          "sample-host",
			ProviderID:        "anvil://00000000-0000-0000-0000-000000000000",
			KubeletVersion:    "v1.37.2",
			KubeletURL:        "https://artifacts.example.invalid/kubelet/v1.37.2/kubelet",
			KubeletSHA256:     "0000000000000000000000000000000000000000000000000000000000000000",
		},
		Agent: Agent{
			Endpoint:   "https://192.0.2.1:9443",
			Credential: "sample-agent-credential",
		},
		Extra:       map[string]string{},
		SecretExtra: map[string]string{},
	}
}

// sampleCAPEM is a syntactically valid PEM block of the size of a real CA
// certificate (it is not a usable certificate; templates only embed it).
const sampleCAPEM = `-----BEGIN CERTIFICATE-----
MIIBdzCCAR2gAwIBAgIBADAKBggqhkjOPQQDAjAVMRMwEQYDVQQDEwprdWJlcm5l
dGVzMB4XDTI2MDEwMTAwMDAwMFoXDTM2MDEwMTAwMDAwMFowFTETMBEGA1UEAxMK
a3ViZXJuZXRlczBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABAAAAAAAAAAAAAAA
AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
AAAAAAAAAAAAAAAAAAAAo2EwXzAOBgNVHQ8BAf8EBAMCAqQwDwYDVR0TAQH/BAUw
AwEB/zAdBgNVHQ4EFgQUAAAAAAAAAAAAAAAAAAAAAAAAAAAwHQYDVR0RBBYwFIIS
c2FtcGxlLmV4YW1wbGUub3JnMAoGCCqGSM49BAMCA0gAMEUCIQAAAAAAAAAAAAAA
AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAIgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
AAAAAAAAAAA=
-----END CERTIFICATE-----
`
