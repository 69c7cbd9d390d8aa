package delivery

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	ign34 "github.com/coreos/ignition/v2/config/v3_4"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/server/kube"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/render"
)

// agentCredTTL is how long the plaintext of a boot's agent credential is
// kept in memory: long enough for every file cloud-init fetches during one
// boot (they all must carry the same credential), short enough that it is
// gone long before the next boot.
const agentCredTTL = 10 * time.Minute

// agentCreds remembers the agent credential issued for each boot.
type agentCreds struct {
	mu sync.Mutex
	m  map[string]agentCred // host UID + "/" + boot request ID
}

type agentCred struct {
	value string
	at    time.Time
}

// agentCredential returns this boot's agent credential, issuing it (and
// so revoking the previous boot's) on the first config request of the
// boot. Only its hash is stored, in Host status.
func (c *Configs) agentCredential(ctx context.Context, h *metalv1.Host) (string, error) {
	if c.o.Writer == nil {
		return "", nil
	}
	key := string(h.UID) + "/" + h.Status.BootRequestID
	now := c.o.Now()
	c.agent.mu.Lock()
	if c.agent.m == nil {
		c.agent.m = map[string]agentCred{}
	}
	for k, v := range c.agent.m {
		if now.Sub(v.at) > agentCredTTL {
			delete(c.agent.m, k)
		}
	}
	if v, ok := c.agent.m[key]; ok {
		c.agent.mu.Unlock()
		return v.value, nil
	}
	c.agent.mu.Unlock()
	v, err, _ := c.flight.Do("agent/"+key, func() (any, error) {
		cred, err := kube.IssueCredential(ctx, c.o.Writer, h.DeepCopy(), rand.Reader)
		if err != nil {
			return "", err
		}
		c.agent.mu.Lock()
		c.agent.m[key] = agentCred{value: cred, at: now}
		c.agent.mu.Unlock()
		return cred, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// issueAgentCredential is hoststore's OnConsume hook: it puts the hash of a
// new agent credential into h (the Host whose boot credential is about to be
// consumed), so both go out in one status patch, and remembers the plaintext
// for this boot once the patch succeeded. Without a Writer, configs carry
// no agent credential and h is left alone.
func (c *Configs) issueAgentCredential(h *metalv1.Host) func() {
	if c == nil || c.o.Writer == nil {
		return nil
	}
	cred, hash, err := agent.NewCredential(rand.Reader, string(h.UID))
	if err != nil {
		return nil // agentCredential issues one with its own write instead
	}
	if h.Status.Agent == nil {
		h.Status.Agent = &metalv1.AgentStatus{}
	}
	h.Status.Agent.CredentialHash = hash
	key := string(h.UID) + "/" + h.Status.BootRequestID
	return func() {
		c.agent.mu.Lock()
		defer c.agent.mu.Unlock()
		if c.agent.m == nil {
			c.agent.m = map[string]agentCred{}
		}
		c.agent.m[key] = agentCred{value: cred, at: c.o.Now()}
	}
}

// wipeFiles are what a wipe boot's OS gets: where the agent reports, its
// credential, and which host it is. No join secrets.
func (c *Configs) wipeFiles(ctx context.Context, t target) (map[string]string, error) {
	base, err := baseURL(ctx, c.o.BaseURL)
	if err != nil {
		return nil, err
	}
	cred, err := c.agentCredential(ctx, t.host)
	if err != nil {
		return nil, err
	}
	if cred == "" {
		return nil, fmt.Errorf("host %s/%s: no agent credential can be issued for its wipe", t.host.Namespace, t.host.Name)
	}
	return map[string]string{
		"/etc/anvil/agent.env": "ANVIL_ENDPOINT=" + base + "\nANVIL_CREDENTIAL=" + cred + "\nANVIL_NODE_NAME=" + hostname(t.host) + "\n",
		"/etc/anvil/purpose":   string(metalv1.BootPurposeWipe) + "\n",
	}, nil
}

// wipeIgnition is an Ignition 3.4 config with the wipe files, built
// directly: the class's template is for joining, not for wiping.
func (c *Configs) wipeIgnition(ctx context.Context, t target) ([]byte, error) {
	files, err := c.wipeFiles(ctx, t)
	if err != nil {
		return nil, err
	}
	type contents struct {
		Source string `json:"source"`
	}
	type file struct {
		Path      string   `json:"path"`
		Mode      int      `json:"mode"`
		Overwrite bool     `json:"overwrite"`
		Contents  contents `json:"contents"`
	}
	var out []file
	for _, p := range []string{"/etc/anvil/agent.env", "/etc/anvil/purpose"} {
		out = append(out, file{Path: p, Mode: 0o600, Overwrite: true, Contents: contents{Source: dataURL(files[p])}})
	}
	doc := map[string]any{"ignition": map[string]any{"version": "3.4.0"}, "storage": map[string]any{"files": out}}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	if _, rep, err := ign34.Parse(b); err != nil || rep.IsFatal() {
		return nil, fmt.Errorf("wipe config is not valid Ignition: %v %s", err, rep.String())
	}
	return b, nil
}

// wipeNoCloud is the cloud-init form of the wipe files.
func (c *Configs) wipeNoCloud(ctx context.Context, t target) (*render.NoCloud, error) {
	files, err := c.wipeFiles(ctx, t)
	if err != nil {
		return nil, err
	}
	type wf struct {
		Path        string `json:"path"`
		Permissions string `json:"permissions"`
		Content     string `json:"content"`
	}
	ud := map[string]any{"write_files": []wf{
		{Path: "/etc/anvil/agent.env", Permissions: "0600", Content: files["/etc/anvil/agent.env"]},
		{Path: "/etc/anvil/purpose", Permissions: "0644", Content: files["/etc/anvil/purpose"]},
	}}
	b, err := json.Marshal(ud)
	if err != nil {
		return nil, err
	}
	id := "wipe-" + t.host.Status.BootRequestID
	meta := fmt.Sprintf("instance-id: %s\nlocal-hostname: %s\n", id, hostname(t.host))
	// JSON is YAML; cloud-init wants the header line first.
	return &render.NoCloud{InstanceID: id, MetaData: []byte(meta), UserData: append([]byte("#cloud-config\n"), b...)}, nil
}

func dataURL(s string) string {
	return "data:;base64," + base64.StdEncoding.EncodeToString([]byte(s))
}
