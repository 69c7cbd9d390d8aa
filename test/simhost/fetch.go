package simhost

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe/index"
)

// Files a simulated host reads from its config.
const (
	AgentEnvPath   = "/etc/anvil/agent.env"   // ANVIL_ENDPOINT, ANVIL_CREDENTIAL, ANVIL_NODE_NAME
	KubeletEnvPath = "/etc/anvil/kubelet.env" // NODE_NAME, PROVIDER_ID, KUBELET_VERSION (Class writes it)
	PurposePath    = "/etc/anvil/purpose"     // "wipe" in a wipe boot's config
	HostnamePath   = "/etc/hostname"
)

// Kernel arguments that carry the config's URL with the boot credential.
const (
	ignitionURLArg = "ignition.config.url="
	// noCloudArg is how Anvil hands cloud-init its NoCloud seed; cloud-init
	// splits the value at ";" into key=value pairs, "s" being the seed.
	noCloudArg = "ds=nocloud-net;"
)

// bootConfig is what a booted host learned from its config. credential is
// secret: never logged, never in an error.
type bootConfig struct {
	endpoint, credential string
	nodeName, providerID string
	kubeletVersion       string
	wipe                 bool
}

// scriptRetries bounds how often a host asks again for a script without
// a config URL while its Host still says it network boots: Anvil's HTTP
// server answers from its own informer, which may be a moment behind the
// fleet's. (A real server's POST takes minutes; this never happens there.)
const scriptRetries = 15

// fetchConfig does the network boot's HTTP part: the iPXE script, then
// the config with the boot credential from the script: Ignition's, or the
// NoCloud seed as cloud-init fetches it.
func (s *simHost) fetchConfig(ctx context.Context, h *metalv1.Host, bootReq string) (*bootConfig, error) {
	f := s.f
	if h == nil {
		return nil, errors.New("the Host is gone")
	}
	mac := strings.ToLower(h.Spec.BootMACs[0])
	var ignURL, seedURL string
	for attempt := 0; ; attempt++ {
		script, err := s.get(ctx, f.o.BootURL+"/boot/"+mac+".ipxe", "iPXE script")
		if err != nil {
			return nil, err
		}
		if strings.Contains(string(script), "no boot credential in this script") {
			return nil, errNoCredential // withheld: a real boot comes up without a config
		}
		if ignURL, seedURL = configURLs(script); ignURL != "" || seedURL != "" {
			break
		}
		cur := f.host(ctx, s.key)
		if attempt >= scriptRetries || cur == nil || !index.Decide(cur).PXE || cur.Status.BootRequestID != bootReq {
			return nil, fmt.Errorf("%w (after %d tries)", errNoCredential, attempt+1)
		}
		f.stats.scriptRetries.Add(1)
		if !sleep(ctx, time.Second) {
			return nil, ctx.Err()
		}
	}
	f.event(Event{Host: s.key, Kind: EventScriptFetched, BootRequest: bootReq})
	if strings.HasPrefix(ignURL, "/") {
		ignURL = f.o.BootURL + ignURL
	}
	if !sleep(ctx, f.jitter(f.o.KernelBootDelay)) {
		return nil, ctx.Err()
	}
	var files map[string]string
	hostname := "" // the host's name from its config, if it names one
	if ignURL != "" {
		body, err := s.retryGet(ctx, ignURL, "Ignition config")
		if err != nil {
			return nil, err
		}
		if files, err = ignitionFiles(body); err != nil {
			return nil, err
		}
		hostname = strings.TrimSpace(files[HostnamePath])
	} else {
		seed, err := s.fetchSeed(ctx, seedURL)
		if err != nil {
			return nil, err
		}
		files, hostname = seed.files, seed.localHostname
	}
	return s.configFrom(h, files, hostname)
}

// configFrom reads the agent's and the kubelet's settings from the
// config's files. A config with KubeletEnvPath is one of Anvil's classes
// (Class); one without is Cluster API bootstrap data with Anvil's agent
// part: kubeadm's kubelet registers the Node under the host's hostname,
// without a providerID (Anvil's Machine controller sets it), running the
// version Options.KubeletVersionFor says.
func (s *simHost) configFrom(h *metalv1.Host, files map[string]string, hostname string) (*bootConfig, error) {
	agentEnv, ok := files[AgentEnvPath]
	if !ok {
		return nil, fmt.Errorf("the config has no %s: the MachineClass must write the agent's endpoint and credential there (see simhost.Class), or the config be Cluster API bootstrap data with Anvil's agent part", AgentEnvPath)
	}
	a := parseEnv(agentEnv)
	cfg := &bootConfig{endpoint: a["ANVIL_ENDPOINT"], credential: a["ANVIL_CREDENTIAL"], nodeName: a["ANVIL_NODE_NAME"],
		wipe: strings.TrimSpace(files[PurposePath]) == string(metalv1.BootPurposeWipe)}
	if cfg.endpoint == "" || cfg.credential == "" {
		return nil, fmt.Errorf("%s lacks ANVIL_ENDPOINT or ANVIL_CREDENTIAL", AgentEnvPath)
	}
	if cfg.wipe {
		return cfg, nil
	}
	k, ok := files[KubeletEnvPath]
	if !ok {
		if s.f.o.KubeletVersionFor == nil {
			return nil, fmt.Errorf("the config has no %s (Cluster API bootstrap data?) and Options.KubeletVersionFor is not set", KubeletEnvPath)
		}
		if hostname != "" {
			cfg.nodeName = hostname
		}
		cfg.providerID, cfg.kubeletVersion = "", s.f.o.KubeletVersionFor(h)
		if cfg.nodeName == "" || cfg.kubeletVersion == "" {
			return nil, fmt.Errorf("bootstrap data config: no hostname (meta-data local-hostname, %s or ANVIL_NODE_NAME) or no kubelet version from Options.KubeletVersionFor", HostnamePath)
		}
		return cfg, nil
	}
	kv := parseEnv(k)
	cfg.nodeName, cfg.providerID, cfg.kubeletVersion = kv["NODE_NAME"], kv["PROVIDER_ID"], kv["KUBELET_VERSION"]
	if cfg.nodeName == "" || cfg.providerID == "" || cfg.kubeletVersion == "" {
		return nil, fmt.Errorf("%s lacks NODE_NAME, PROVIDER_ID or KUBELET_VERSION", KubeletEnvPath)
	}
	return cfg, nil
}

// retryGet fetches a config the way Ignition does: network errors and
// 5xx are retried with a backoff from 100 ms doubling to 5 s; any other
// answer ends the fetch (a 403 fails the boot). Bounded here. (cloud-init
// retries every failure ten times a second apart, a 403 too, which ends
// the same way.)
func (s *simHost) retryGet(ctx context.Context, u, what string) ([]byte, error) {
	delay := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		body, err := s.get(ctx, u, what)
		var se *statusError
		if err == nil || (errors.As(err, &se) && se.code < 500) || attempt == 12 || ctx.Err() != nil {
			return body, err
		}
		if !sleep(ctx, delay) {
			return nil, ctx.Err()
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// statusError is a non-200 answer.
type statusError struct {
	what, path, status string
	code               int
}

func (e *statusError) Error() string { return fmt.Sprintf("GET %s %s: %s", e.what, e.path, e.status) }

// get fetches u (bounded by the fleet's in-flight limit). Errors name
// what was fetched and the path, never the query or the NoCloud path's
// credential.
func (s *simHost) get(ctx context.Context, u, what string) ([]byte, error) {
	if !s.f.acquire(ctx) {
		return nil, ctx.Err()
	}
	defer s.f.release()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: bad URL", what)
	}
	req.Header.Set("User-Agent", "iPXE/1.21.1 (simhost)")
	path := redactPath(req.URL.Path)
	resp, err := s.f.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s %s: %v", what, path, scrub(err, u))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s %s: %v", what, path, scrub(err, u))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &statusError{what: what, path: path, status: resp.Status, code: resp.StatusCode}
	}
	return body, nil
}

// redactPath hides the boot credential of a NoCloud seed path
// (/config/<mac>/nocloud/<credential>/<file>).
func redactPath(p string) string {
	parts := strings.Split(p, "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "nocloud" {
			parts[i+1] = "<credential>"
		}
	}
	return strings.Join(parts, "/")
}

// scrub removes the URL (and its credential) from a transport error.
func scrub(err error, u string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return strings.ReplaceAll(err.Error(), u, "<url>")
}

// configURLs finds ignition.config.url= or the NoCloud seed
// (ds=nocloud-net;s=<url>) on the script's kernel line.
func configURLs(script []byte) (ignition, seed string) {
	sc := bufio.NewScanner(bytes.NewReader(script))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "kernel ") {
			continue
		}
		for _, tok := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(tok, ignitionURLArg); ok {
				ignition = v
			}
			if v, ok := strings.CutPrefix(tok, noCloudArg); ok {
				for _, kv := range strings.Split(v, ";") {
					if k, val, _ := strings.Cut(kv, "="); k == "s" || k == "seedfrom" {
						seed = val
					}
				}
			}
		}
	}
	return ignition, seed
}

// ignitionFiles returns the inline files of an Ignition config by path.
func ignitionFiles(body []byte) (map[string]string, error) {
	var doc struct {
		Ignition struct {
			Version string `json:"version"`
		} `json:"ignition"`
		Storage struct {
			Files []struct {
				Path     string `json:"path"`
				Contents struct {
					Source      *string `json:"source"`
					Compression *string `json:"compression"`
				} `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the config is not Ignition JSON: %v", err)
	}
	if doc.Ignition.Version == "" {
		return nil, errors.New("the config has no ignition.version")
	}
	out := map[string]string{}
	for _, fl := range doc.Storage.Files {
		src := fl.Contents.Source
		if src == nil || !strings.HasPrefix(*src, "data:") {
			continue // fetched from elsewhere (the kubelet binary)
		}
		b, err := dataURL(*src)
		if err != nil {
			return nil, fmt.Errorf("file %s: %v", fl.Path, err)
		}
		if c := fl.Contents.Compression; c != nil && *c == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, fmt.Errorf("file %s: %v", fl.Path, err)
			}
			if b, err = io.ReadAll(io.LimitReader(zr, 1<<20)); err != nil {
				return nil, fmt.Errorf("file %s: %v", fl.Path, err)
			}
		}
		out[fl.Path] = string(b)
	}
	return out, nil
}

// dataURL decodes an RFC 2397 data URL.
func dataURL(s string) ([]byte, error) {
	meta, data, ok := strings.Cut(strings.TrimPrefix(s, "data:"), ",")
	if !ok {
		return nil, errors.New("malformed data URL")
	}
	if strings.HasSuffix(meta, ";base64") {
		return base64.StdEncoding.DecodeString(data)
	}
	v, err := url.PathUnescape(data)
	return []byte(v), err
}

// parseEnv reads KEY=VALUE lines (an EnvironmentFile).
func parseEnv(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return out
}
