package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/coreos/vcontext/report"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/render"
)

// A host booted with Cluster API bootstrap data runs kubeadm's join, and
// Anvil's in-place upgrade needs its agent there too. So the config
// endpoint serves the bootstrap data with anvil-agent's files added: the
// env-file (render.AgentEnvPath, mode 0600: endpoint, this boot's agent
// credential, the Node's name and where kubeadm's kubelet lives) and the
// agent's systemd unit, enabled and started. Cluster API's content is not
// changed:
//
//   - cloud-config: the user-data becomes a MIME multipart whose first part
//     is the bootstrap data, verbatim, and whose second is Anvil's
//     cloud-config (withAgentCloudConfig). That part also installs the
//     Machine's kubelet (sha256 checked) before kubeadm runs, when the
//     image has another, and enables kubelet.service, so that the Node runs
//     the version its Machine asks for and comes back after a reboot;
//   - Ignition: the files and the unit are appended to the config's
//     storage.files and systemd.units (withAgentIgnition).
//
// The image must carry anvil-agent at the unit's path (as the lab's host
// image does). Without a Writer (no agent credential can be issued) the
// bootstrap data is served as it is.

// Where kubeadm hosts keep the agent and the kubelet it upgrades, by
// format: cloud-init images (Cluster API's image-builder for Ubuntu and
// the like) have kubeadm's packages in /usr/bin; Ignition ones (Flatcar:
// Cluster API's Ignition is Flatcar's) have a read-only /usr and the
// binaries in /opt/bin.
var agentLayouts = map[metalv1.BootstrapDataFormat]struct{ agent, kubelet string }{
	metalv1.BootstrapFormatCloudConfig: {agent: "/usr/local/bin/anvil-agent", kubelet: "/usr/bin/kubelet"},
	metalv1.BootstrapFormatIgnition:    {agent: "/opt/bin/anvil-agent", kubelet: "/opt/bin/kubelet"},
}

// kubeadmKubeconfig is the kubelet's kubeconfig on a host kubeadm joined:
// the agent checks the Node through it after an upgrade.
const kubeadmKubeconfig = "/etc/kubernetes/kubelet.conf"

// bootstrapAgentEnv is the agent's env-file for a host booting with
// bootstrap data of format f; ok is false without an agent credential.
func (c *Configs) bootstrapAgentEnv(ctx context.Context, t target, f metalv1.BootstrapDataFormat) (env render.AgentEnv, ok bool, err error) {
	base, err := baseURL(ctx, c.o.BaseURL)
	if err != nil {
		return env, false, err
	}
	cred, err := c.agentCredential(ctx, t.host)
	if err != nil || cred == "" {
		return env, false, err
	}
	return render.AgentEnv{
		Endpoint: base, Credential: cred,
		// kubeadm registers the Node by the hostname the meta-data
		// (or DHCP) gave the host; the Machine controller adopts it by
		// that name.
		NodeName:       hostname(t.host),
		KubeletManager: "systemd", KubeletBin: agentLayouts[f].kubelet, Kubeconfig: kubeadmKubeconfig,
	}, true, nil
}

// agentMergeType makes cloud-init append Anvil's write_files and runcmd
// to those of the parts before it. Its default for a cloud-config part,
// dict(replace)+list()+str(), would replace Cluster API's write_files and
// runcmd with Anvil's lists (cloud-init's handlers/cloud_config.py,
// "Merging User-Data Sections" in its docs). A text/x-shellscript part
// would need no merging, but it runs in scripts_user before runcmd's
// script ("anvil..." sorts before "runcmd"): before kubeadm join writes
// the kubelet's kubeconfig. Appended to runcmd, the agent starts after
// the join, and its files are written by write_files with their modes,
// as in Anvil's own cloud-init classes.
const agentMergeType = "list(append)+dict(no_replace,recurse_list)+str()"

// Names of the two parts in cloud-init's logs and instance directory.
const (
	capiPartName  = "cluster-api-bootstrap-data"
	agentPartName = "anvil-agent.cfg"
)

// withAgentCloudConfig returns user-data that runs Cluster API's
// user-data unchanged, with the kubelet k installed first (bootcmd runs in
// cloud-init's init stage, before runcmd's kubeadm join), and then installs
// anvil-agent. Anvil's part must come last: a later part without
// Merge-Type would replace its lists.
func withAgentCloudConfig(userData []byte, env render.AgentEnv, k hostKubelet) ([]byte, error) {
	type writeFile struct {
		Path        string `json:"path"`
		Permissions string `json:"permissions"`
		Content     string `json:"content"`
	}
	ours, err := json.Marshal(map[string]any{
		"write_files": []writeFile{
			{Path: render.AgentEnvPath, Permissions: "0600", Content: env.File()},
			{Path: render.AgentUnitPath, Permissions: "0644", Content: render.AgentUnit(agentLayouts[metalv1.BootstrapFormatCloudConfig].agent)},
		},
		"bootcmd": [][]string{kubeletBootcmd(k, env.KubeletBin)},
		// kubeadm restarts the kubelet but does not enable it (its
		// packages do; an image may not have).
		"runcmd": [][]string{{"systemctl", "daemon-reload"}, {"systemctl", "enable", "kubelet.service"}, {"systemctl", "enable", "--now", render.AgentUnitName}},
	})
	if err != nil {
		return nil, err
	}
	// JSON is YAML; cloud-init wants the header line first.
	ours = append([]byte("#cloud-config\n"), ours...)
	return render.MultipartUserData([]render.UserDataPart{
		capiPart(userData),
		{ContentType: "text/cloud-config", Filename: agentPartName, MergeType: agentMergeType, Body: ours},
	})
}

// kubeletBootcmd is a bootcmd entry that makes bin the kubelet k: once
// per instance (cloud-init-per; bootcmd runs at every boot), and not once
// anvil-agent has adopted bin (a symlink into its versioned layout: from
// then on upgrades are the agent's). A kubelet that cannot be fetched or
// fails its sha256 is not installed, and bin is removed, so that kubeadm
// join fails on the host's console rather than join with another version.
// The new file is fsync'd before it is renamed over bin, and bin's
// directory after: ext4 allocates a new file's blocks late, and a power
// loss in the next half minute would leave bin empty.
func kubeletBootcmd(k hostKubelet, bin string) []string {
	script := fmt.Sprintf(`bin=%s; want=%s; url=%s; version=%s
[ -L "$bin" ] && exit 0
[ "$(sha256sum "$bin" 2>/dev/null | cut -d' ' -f1)" = "$want" ] && exit 0
for try in 1 2 3; do
  if python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$url" "$bin.anvil-new" &&
    echo "$want  $bin.anvil-new" | sha256sum -c --status -; then
    chmod 0755 "$bin.anvil-new" && sync "$bin.anvil-new" && mv -f "$bin.anvil-new" "$bin" && sync "$(dirname "$bin")" &&
      echo "anvil: kubelet $version installed as $bin" && exit 0
  fi
  rm -f "$bin.anvil-new"; sleep 2
done
rm -f "$bin"
echo "anvil: kubelet $version from $url failed its download or sha256 check: $bin removed, so kubeadm join stops" >&2
exit 1`, shellQuote(bin), shellQuote(k.sha256), shellQuote(k.url), shellQuote(k.version))
	return []string{"cloud-init-per", "instance", "anvil-kubelet", "sh", "-c", script}
}

// shellQuote quotes s for sh, as one word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// capiPart carries the bootstrap data as cloud-init would read it on its
// own (cloudinit/user_data.py, convert_string and _process_msg): a MIME
// message (cloud-init's test: "mime-version:" in the first 4096 bytes) is
// nested as it is, its parts walked like ours; gzip is labelled as such,
// which cloud-init decompresses before it looks at the content; anything
// else is text/plain, whose type cloud-init finds from the first line
// (## template: jinja, #cloud-config, #!, #include ...), as for user-data
// that is not MIME. Base64 keeps every byte.
func capiPart(data []byte) render.UserDataPart {
	head := data[:min(len(data), 4096)]
	switch {
	case len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b:
		return render.UserDataPart{ContentType: "application/x-gzip", Filename: capiPartName, Base64: true, Body: data}
	case bytes.Contains(bytes.ToLower(head), []byte("mime-version:")):
		return render.UserDataPart{Entity: true, Body: data}
	}
	return render.UserDataPart{ContentType: "text/plain; charset=utf-8", Filename: capiPartName, Base64: true, Body: data}
}

// Ignition spec versions whose configs get the agent: the stable 3.x ones,
// checked by Ignition's own parser (render.IgnitionParser); 2.1 to 2.3
// (Cluster API's kubeadm bootstrap provider writes 2.3, for Flatcar, whose
// Ignition reads spec 2 too), for which the Ignition module has no parser:
// their files and units have the fields used here since 2.1 (2.0 says
// "enable").
var ignitionV2 = map[string]bool{"2.1.0": true, "2.2.0": true, "2.3.0": true}

// withAgentIgnition appends anvil-agent's env-file and unit to an Ignition
// config's storage.files and systemd.units. Appended in place rather than
// in a wrapper config that merges Cluster API's: spec 2 has no merge (its
// append fetches and appends differently), and in one config Ignition's
// duplicate checks see both (a merged child would silently replace our
// env-file). Nothing else of the config changes; numbers keep their text.
// what names the Secret in errors, which never quote the config.
func withAgentIgnition(data []byte, env render.AgentEnv, what string) ([]byte, error) {
	doc, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not Ignition JSON: %v", what, err)
	}
	var version string
	if ign, ok := doc["ignition"].(map[string]any); ok {
		version, _ = ign["version"].(string)
	}
	parse, v3 := render.IgnitionParser(version, false)
	if !v3 && !ignitionV2[version] {
		return nil, fmt.Errorf("%s has Ignition version %.32q: Anvil adds its agent to configs of Ignition spec 3.0.0 to 3.6.0 and 2.1.0 to 2.3.0 only", what, version)
	}
	if v3 {
		if rep, err := parse(data); err != nil || rep.IsFatal() {
			return nil, fmt.Errorf("%s is not a valid Ignition %s config: %s", what, version, firstProblem(rep, err))
		}
	}
	files, err := list(doc, "storage", "files")
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	units, err := list(doc, "systemd", "units")
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	for _, f := range files {
		if m, _ := f.(map[string]any); m != nil && m["path"] == render.AgentEnvPath {
			return nil, fmt.Errorf("%s already writes %s, which Anvil writes for its agent: leave it out of the bootstrap config", what, render.AgentEnvPath)
		}
	}
	for _, u := range units {
		if m, _ := u.(map[string]any); m != nil && m["name"] == render.AgentUnitName {
			return nil, fmt.Errorf("%s already has the unit %s, which Anvil installs: leave it out of the bootstrap config", what, render.AgentUnitName)
		}
	}
	file := map[string]any{"path": render.AgentEnvPath, "mode": 0o600, "contents": map[string]any{"source": dataURL(env.File())}}
	if v3 {
		file["overwrite"] = true
	} else {
		file["filesystem"] = "root" // spec 2 names the filesystem of every file
	}
	unit := map[string]any{"name": render.AgentUnitName, "enabled": true, "contents": render.AgentUnit(agentLayouts[metalv1.BootstrapFormatIgnition].agent)}
	storage, _ := doc["storage"].(map[string]any)
	storage["files"] = append(files, file)
	systemd, _ := doc["systemd"].(map[string]any)
	systemd["units"] = append(units, unit)
	// Without HTML escaping: Cluster API's strings keep their "&&" and
	// "<" as they were written.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("%s: encoding the config: %v", what, err)
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if v3 {
		if rep, err := parse(out); err != nil || rep.IsFatal() {
			return nil, fmt.Errorf("%s: with anvil-agent's files added the config is no valid Ignition %s: %s", what, version, firstProblem(rep, err))
		}
	}
	return out, nil
}

// decodeObject decodes a JSON object keeping numbers as their text.
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("syntax error at byte %d", se.Offset) // the message may quote the data
		}
		return nil, errors.New("not a JSON object")
	}
	if doc == nil {
		return nil, errors.New("not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	return doc, nil
}

// list returns doc[outer][inner] as a list, creating the object and the
// list if missing; a value of another type is an error naming the field.
func list(doc map[string]any, outer, inner string) ([]any, error) {
	o, ok := doc[outer]
	if !ok || o == nil {
		o = map[string]any{}
		doc[outer] = o
	}
	om, ok := o.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", outer)
	}
	l, ok := om[inner]
	if !ok || l == nil {
		return nil, nil
	}
	ll, ok := l.([]any)
	if !ok {
		return nil, fmt.Errorf("%s.%s is not a list", outer, inner)
	}
	return ll, nil
}

// firstProblem describes a parse failure by where it is: the JSON path
// and position of the fatal entries, never their message (which may quote
// the config).
func firstProblem(rep report.Report, err error) string {
	var where []string
	for _, e := range rep.Entries {
		if e.Kind == nil || !e.Kind.IsFatal() {
			continue
		}
		w := "at " + e.Context.String()
		if e.Marker.StartP != nil {
			w += fmt.Sprintf(" (line %d, column %d)", e.Marker.StartP.Line, e.Marker.StartP.Column)
		}
		where = append(where, w)
	}
	switch {
	case len(where) > 0:
		n := len(where)
		if n > 3 {
			where = append(where[:3], fmt.Sprintf("and %d more", n-3))
		}
		return fmt.Sprintf("%d error(s) %s", n, strings.Join(where, ", "))
	case err != nil:
		return "it does not parse"
	}
	return "it does not validate"
}
