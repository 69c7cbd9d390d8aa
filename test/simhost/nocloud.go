package simhost

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"

	"sigs.k8s.io/yaml"
)

// seed is what a simulated cloud-init learned from its NoCloud seed.
type seed struct {
	localHostname string
	// files are the write_files of the user-data's cloud-config parts,
	// by path (a later part's file wins, as cloud-init's write_files
	// writes them in order).
	files map[string]string
}

// fetchSeed fetches the NoCloud seed as cloud-init 22.4 does
// (util.read_seeded): the file names appended to the seed URL, meta-data,
// user-data, then vendor-data, whose failure cloud-init ignores. Errors
// never carry the URL: its path holds the boot credential.
func (s *simHost) fetchSeed(ctx context.Context, base string) (*seed, error) {
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, errors.New("the NoCloud seed on the kernel line is not an http(s) URL")
	}
	md, err := s.retryGet(ctx, base+"meta-data", "NoCloud meta-data")
	if err != nil {
		return nil, err
	}
	ud, err := s.retryGet(ctx, base+"user-data", "NoCloud user-data")
	if err != nil {
		return nil, err
	}
	_, _ = s.retryGet(ctx, base+"vendor-data", "NoCloud vendor-data")
	var meta struct {
		LocalHostname string `json:"local-hostname"`
	}
	if err := yaml.Unmarshal(md, &meta); err != nil {
		return nil, errors.New("the NoCloud meta-data is not YAML")
	}
	files, err := userDataFiles(ud)
	if err != nil {
		return nil, err
	}
	return &seed{localHostname: meta.LocalHostname, files: files}, nil
}

// maxUserData bounds a decompressed part, as the fetch bounds the body.
const maxUserData = 8 << 20

// userDataFiles reads the write_files of cloud-config user-data the way
// cloud-init finds its parts (cloudinit/user_data.py): MIME (when
// "mime-version:" is in the first 4096 bytes) walked part by part and into
// nested multiparts, base64 parts decoded, gzip decompressed, the type of
// text/plain (or of user-data that is not MIME) taken from its first line.
// Jinja templates (Cluster API's kubeadm part) are not rendered and their
// files not read: a simulated host needs only Anvil's part.
func userDataFiles(ud []byte) (map[string]string, error) {
	files := map[string]string{}
	if err := walkUserData(ud, "", files, 0); err != nil {
		return nil, fmt.Errorf("NoCloud user-data: %w", err)
	}
	return files, nil
}

func walkUserData(data []byte, ctype string, files map[string]string, depth int) error {
	if depth > 4 {
		return errors.New("MIME parts nested too deep")
	}
	if ctype == "" && bytes.Contains(bytes.ToLower(data[:min(len(data), 4096)]), []byte("mime-version:")) {
		r := textproto.NewReader(bufio.NewReader(bytes.NewReader(data)))
		hdr, err := r.ReadMIMEHeader()
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("MIME header: %v", err)
		}
		body, _ := io.ReadAll(r.R)
		return walkEntity(hdr, body, files, depth)
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b || isGzipType(ctype) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("gzip: %v", err)
		}
		if data, err = io.ReadAll(io.LimitReader(zr, maxUserData)); err != nil {
			return fmt.Errorf("gzip: %v", err)
		}
		if ctype == "" { // the whole user-data: cloud-init looks for MIME in it then
			return walkUserData(data, "", files, depth+1)
		}
		ctype = ""
	}
	switch ctype {
	case "", "text/plain", "text/x-not-multipart":
		first, _, _ := strings.Cut(string(data), "\n")
		if strings.TrimSpace(first) != "#cloud-config" {
			return nil // a script, a jinja template, an include...: not ours
		}
	case "text/cloud-config":
	default:
		return nil
	}
	return cloudConfigFiles(data, files)
}

// walkEntity walks one MIME entity: a multipart's parts, or a leaf.
func walkEntity(hdr textproto.MIMEHeader, body []byte, files map[string]string, depth int) error {
	mt, params, err := mime.ParseMediaType(hdr.Get("Content-Type"))
	if err != nil {
		mt = "text/plain" // cloud-init's default for a part without a type
	}
	if strings.EqualFold(hdr.Get("Content-Transfer-Encoding"), "base64") {
		if body, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(body)), "")); err != nil {
			return fmt.Errorf("a base64 part: %v", err)
		}
	}
	if !strings.HasPrefix(mt, "multipart/") {
		return walkUserData(body, mt, files, depth+1)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("MIME multipart: %v", err)
		}
		b, err := io.ReadAll(io.LimitReader(p, maxUserData))
		if err != nil {
			return fmt.Errorf("MIME part: %v", err)
		}
		if err := walkEntity(p.Header, b, files, depth+1); err != nil {
			return err
		}
	}
}

func isGzipType(ctype string) bool {
	switch ctype {
	case "application/gzip", "application/gzip-compressed", "application/gzipped", "application/x-compress",
		"application/x-compressed", "application/x-gunzip", "application/x-gzip", "application/x-gzip-compressed":
		return true
	}
	return false
}

// cloudConfigFiles adds a cloud-config's write_files.
func cloudConfigFiles(data []byte, files map[string]string) error {
	var cc struct {
		WriteFiles []struct {
			Path     string `json:"path"`
			Content  string `json:"content"`
			Encoding string `json:"encoding"`
		} `json:"write_files"`
	}
	if err := yaml.Unmarshal(data, &cc); err != nil {
		return errors.New("a cloud-config part is not YAML with a write_files list") // the YAML error may quote it
	}
	for _, f := range cc.WriteFiles {
		b := []byte(f.Content)
		enc := strings.ToLower(f.Encoding)
		if strings.Contains(enc, "b64") || strings.Contains(enc, "base64") {
			var err error
			if b, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(f.Content), "")); err != nil {
				return fmt.Errorf("write_files %s: %v", f.Path, err)
			}
		}
		if strings.HasPrefix(enc, "gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return fmt.Errorf("write_files %s: %v", f.Path, err)
			}
			if b, err = io.ReadAll(io.LimitReader(zr, maxUserData)); err != nil {
				return fmt.Errorf("write_files %s: %v", f.Path, err)
			}
		}
		files[f.Path] = string(b)
	}
	return nil
}
