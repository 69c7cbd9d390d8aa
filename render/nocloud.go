package render

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"

	"gopkg.in/yaml.v3"
)

// NoCloud file names, as cloud-init's NoCloud datasource requests them
// (it appends these to the seed URL).
const (
	FileMetaData      = "meta-data"
	FileUserData      = "user-data"
	FileVendorData    = "vendor-data"
	FileNetworkConfig = "network-config"
)

// NoCloudTemplates are the templates of a cloud-init MachineClass. UserData
// is required; the others are optional and omitted when empty.
type NoCloudTemplates struct {
	UserData      string `json:"userData"`
	VendorData    string `json:"vendorData,omitempty"`
	NetworkConfig string `json:"networkConfig,omitempty"`
}

// NoCloud is a rendered NoCloud seed.
type NoCloud struct {
	// InstanceID is derived from a hash of every rendered file and the
	// hostname: it changes exactly when the content changes, which is what
	// makes cloud-init re-run its per-instance modules.
	InstanceID    string
	MetaData      []byte
	UserData      []byte
	VendorData    []byte // nil when there is no vendor-data template
	NetworkConfig []byte // nil when there is no network-config template
}

// File returns a NoCloud file by its name (FileMetaData, ...). ok is false
// for unknown names and for optional files that were not configured.
func (n *NoCloud) File(name string) (data []byte, ok bool) {
	switch name {
	case FileMetaData:
		return n.MetaData, true
	case FileUserData:
		return n.UserData, true
	case FileVendorData:
		return n.VendorData, n.VendorData != nil
	case FileNetworkConfig:
		return n.NetworkConfig, n.NetworkConfig != nil
	}
	return nil, false
}

// RenderNoCloud renders a cloud-init NoCloud seed and validates every file.
// Failures are *TemplateError with Stage "template" or "cloud-init" and Part
// naming the file. RenderNoCloud has no cache; see Renderer.
func RenderNoCloud(t NoCloudTemplates, vars Vars, opts RenderOptions) (*NoCloud, error) {
	sc := newScrubber(&vars)
	nc, terr := renderNoCloud(t, &vars, opts, sc)
	if terr != nil {
		return nil, terr
	}
	return nc, nil
}

func renderNoCloud(t NoCloudTemplates, vars *Vars, opts RenderOptions, sc scrubber) (*NoCloud, *TemplateError) {
	if strings.TrimSpace(t.UserData) == "" {
		te := sc.newError(StageTemplate, "user-data template is empty")
		te.Part = FileUserData
		return nil, te
	}
	nc := &NoCloud{}
	parts := []struct {
		name     string
		tmpl     string
		validate func(string, []byte, *lineMap, scrubber) *TemplateError
		out      *[]byte
	}{
		{FileUserData, t.UserData, validateUserData, &nc.UserData},
		{FileVendorData, t.VendorData, validateUserData, &nc.VendorData},
		{FileNetworkConfig, t.NetworkConfig, validateNetworkConfig, &nc.NetworkConfig},
	}
	for _, p := range parts {
		if p.tmpl == "" {
			continue
		}
		out, terr := executeTemplate(p.tmpl, vars, opts.MaxOutputBytes, sc)
		if terr != nil {
			terr.Part = p.name
			return nil, terr
		}
		if terr := p.validate(p.name, out, newLineMap(p.tmpl, string(out)), sc); terr != nil {
			return nil, terr
		}
		if out == nil {
			out = []byte{}
		}
		*p.out = out
	}
	nc.InstanceID = instanceID(vars.Hostname, nc.UserData, nc.VendorData, nc.NetworkConfig)
	md, err := yaml.Marshal(struct {
		InstanceID    string `yaml:"instance-id"`
		LocalHostname string `yaml:"local-hostname,omitempty"`
	}{nc.InstanceID, vars.Hostname})
	if err != nil {
		return nil, sc.newError(StageCloudInit, "encoding meta-data: "+err.Error())
	}
	nc.MetaData = md
	return nc, nil
}

// instanceID hashes the inputs with length prefixes so that moving bytes
// between files cannot produce the same ID. A nil (absent) file and an empty
// one hash differently.
func instanceID(hostname string, files ...[]byte) string {
	h := sha256.New()
	var n [9]byte
	write := func(present bool, b []byte) {
		n[0] = 0
		if present {
			n[0] = 1
		}
		binary.BigEndian.PutUint64(n[1:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	write(true, []byte(hostname))
	for _, f := range files {
		write(f != nil, f)
	}
	return "anvil-" + hex.EncodeToString(h.Sum(nil))[:32]
}

// userDataPrefixes are the first-line markers cloud-init's user-data
// handlers accept for formats we do not parse further.
var opaqueUserDataPrefixes = []string{"#!", "#include", "#cloud-boothook", "#part-handler", "## template: jinja"}

// validateUserData accepts what cloud-init would act on: "#cloud-config"
// YAML (parsed here; it must be a mapping), "#cloud-config-archive" (a YAML
// list), a MIME multipart archive (parsed here), or a script / include /
// boothook / jinja template, which are passed through.
func validateUserData(part string, b []byte, lm *lineMap, sc scrubber) *TemplateError {
	fail := func(reason string, line int) *TemplateError {
		te := sc.newError(StageCloudInit, reason)
		te.Part = part
		if line > 0 {
			lm.locate(te, line, 0)
		}
		return te
	}
	first, _, _ := strings.Cut(string(b), "\n")
	first = strings.TrimRight(first, "\r")
	switch {
	case strings.HasPrefix(first, "#cloud-config-archive"):
		var v []any
		if err := yaml.Unmarshal(b, &v); err != nil {
			return yamlError(StageCloudInit, part, err.Error(), b, lm, sc)
		}
		return nil
	case strings.TrimSpace(first) == "#cloud-config":
		var v any
		if err := yaml.Unmarshal(b, &v); err != nil {
			return yamlError(StageCloudInit, part, err.Error(), b, lm, sc)
		}
		if _, isMap := v.(map[string]any); v != nil && !isMap {
			return fail(fmt.Sprintf("#cloud-config must be a YAML mapping, got %T", v), 2)
		}
		return nil
	case isMIME(first):
		return validateMultipart(b, fail)
	}
	for _, p := range opaqueUserDataPrefixes {
		if strings.HasPrefix(first, p) {
			return nil
		}
	}
	return fail(`must start with "#cloud-config", "#!" (a script) or be a MIME multipart archive`, 1)
}

func isMIME(firstLine string) bool {
	l := strings.ToLower(firstLine)
	return strings.HasPrefix(l, "content-type:") || strings.HasPrefix(l, "mime-version:")
}

func validateMultipart(b []byte, fail func(string, int) *TemplateError) *TemplateError {
	hdr, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(b))).ReadMIMEHeader()
	if err != nil && err != io.EOF {
		return fail("invalid MIME header: "+err.Error(), 1)
	}
	mt, params, err := mime.ParseMediaType(hdr.Get("Content-Type"))
	if err != nil {
		return fail("invalid MIME Content-Type: "+err.Error(), 1)
	}
	if !strings.HasPrefix(mt, "multipart/") {
		return fail("MIME user-data must be multipart, got "+mt, 1)
	}
	// Re-read the body after the header block.
	body := b
	if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
		body = b[i+2:]
	} else if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
		body = b[i+4:]
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	n := 0
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail("invalid MIME multipart body: "+err.Error(), 0)
		}
		if _, err := io.Copy(io.Discard, p); err != nil {
			return fail("invalid MIME part: "+err.Error(), 0)
		}
		n++
	}
	if n == 0 {
		return fail("MIME multipart user-data has no parts", 0)
	}
	return nil
}

// validateNetworkConfig checks network-config is a YAML mapping carrying a
// network config version (v1 or v2), either at the top or under "network".
func validateNetworkConfig(part string, b []byte, lm *lineMap, sc scrubber) *TemplateError {
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return yamlError(StageCloudInit, part, err.Error(), b, lm, sc)
	}
	if n, ok := v["network"].(map[string]any); ok {
		v = n
	}
	switch v["version"] {
	case 1, 2:
		return nil
	}
	te := sc.newError(StageCloudInit, "network-config needs \"version: 1\" or \"version: 2\"")
	te.Part = part
	return te
}
