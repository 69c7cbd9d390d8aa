package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// UserDataPart is one part of a MIME multipart user-data (cloud-init's
// "mime multi part archive").
type UserDataPart struct {
	// ContentType of the part, e.g. "text/cloud-config". cloud-init looks at
	// the content of a "text/plain" part to find its type, as it does for
	// user-data that is not MIME.
	ContentType string
	// Entity: Body is a whole MIME message (headers, blank line, body),
	// which becomes the part as it is (cloud-init walks a nested
	// multipart's parts like the others); the other fields are unused.
	Entity bool
	// Filename in Content-Disposition (cloud-init names the part by it in
	// its logs and in /var/lib/cloud/instance).
	Filename string
	// MergeType is the part's Merge-Type header: how cloud-init merges a
	// cloud-config part into the ones before it. Empty: its default.
	MergeType string
	// Base64 encodes Body, so that any bytes (CRLF, long lines, a line
	// that looks like a boundary) arrive as they are. Otherwise Body must
	// be 7-bit text.
	Base64 bool
	Body   []byte
}

// MultipartUserData joins parts into one multipart/mixed user-data in
// their order. The boundary is derived from the parts, so the same parts
// give the same bytes (and the same NoCloud instance-id), and a part
// cannot contain it.
func MultipartUserData(parts []UserDataPart) ([]byte, error) {
	if len(parts) == 0 {
		return nil, errors.New("multipart user-data needs at least one part")
	}
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s:%s:%s:%v:", len(p.Body), p.ContentType, p.Filename, p.MergeType, p.Base64)
		h.Write(p.Body)
	}
	boundary := "anvil-" + hex.EncodeToString(h.Sum(nil))[:40]
	var b bytes.Buffer
	b.WriteString("Content-Type: multipart/mixed; boundary=\"" + boundary + "\"\nMIME-Version: 1.0\n\n")
	for i, p := range parts {
		for _, v := range []string{p.ContentType, p.Filename, p.MergeType} {
			if strings.ContainsAny(v, "\r\n\"") {
				return nil, fmt.Errorf("multipart user-data: part %d: a header value contains a newline or a quote", i)
			}
		}
		b.WriteString("--" + boundary + "\n")
		if p.Entity {
			// A nested message brings its own headers; only the
			// boundary around it is ours.
			if bytes.Contains(p.Body, []byte(boundary)) {
				return nil, fmt.Errorf("multipart user-data: part %d contains the boundary", i)
			}
			b.Write(p.Body)
			b.WriteString("\n")
			continue
		}
		b.WriteString("Content-Type: " + p.ContentType + "\nMIME-Version: 1.0\n")
		if p.Filename != "" {
			b.WriteString("Content-Disposition: attachment; filename=\"" + p.Filename + "\"\n")
		}
		if p.MergeType != "" {
			b.WriteString("Merge-Type: " + p.MergeType + "\n")
		}
		if p.Base64 {
			b.WriteString("Content-Transfer-Encoding: base64\n\n")
			enc := base64.StdEncoding.EncodeToString(p.Body)
			for len(enc) > 76 {
				b.WriteString(enc[:76] + "\n")
				enc = enc[76:]
			}
			b.WriteString(enc + "\n")
			continue
		}
		for _, c := range p.Body {
			if c >= 0x80 || c == '\r' || c == 0 {
				return nil, fmt.Errorf("multipart user-data: part %d is not 7-bit text: encode it with Base64", i)
			}
		}
		if bytes.Contains(p.Body, []byte(boundary)) {
			return nil, fmt.Errorf("multipart user-data: part %d contains the boundary", i)
		}
		b.WriteString("Content-Transfer-Encoding: 7bit\n\n")
		// The line break before a boundary belongs to the boundary: this
		// one keeps the body's own last line break.
		b.Write(p.Body)
		b.WriteString("\n")
	}
	b.WriteString("--" + boundary + "--\n")
	return b.Bytes(), nil
}
