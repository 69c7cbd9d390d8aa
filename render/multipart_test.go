package render

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"
)

// readMultipart splits user-data as a MIME reader does: the top-level
// header, then each part's header and its decoded body.
func readMultipart(t *testing.T, b []byte) (textproto.MIMEHeader, []textproto.MIMEHeader, [][]byte) {
	t.Helper()
	r := textproto.NewReader(bufio.NewReader(bytes.NewReader(b)))
	top, err := r.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(top.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" || top.Get("MIME-Version") != "1.0" {
		t.Fatalf("top-level header %v: %v", top, err)
	}
	body := b[bytes.Index(b, []byte("\n\n"))+2:]
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var hdrs []textproto.MIMEHeader
	var bodies [][]byte
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		v, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		if p.Header.Get("Content-Transfer-Encoding") == "base64" {
			if v, err = base64.StdEncoding.DecodeString(strings.ReplaceAll(string(v), "\n", "")); err != nil {
				t.Fatal(err)
			}
		}
		hdrs, bodies = append(hdrs, p.Header), append(bodies, v)
	}
	return top, hdrs, bodies
}

// Every part's bytes come back as they went in, with the headers asked
// for; the same parts give the same bytes.
func TestMultipartUserData(t *testing.T) {
	nested := []byte("Content-Type: multipart/mixed; boundary=\"inner\"\r\nMIME-Version: 1.0\r\n\r\n--inner\r\nContent-Type: text/x-shellscript\r\n\r\n#!/bin/sh\r\n--inner--\r\n")
	odd := []byte("## template: jinja\r\n#cloud-config\n--looks-like-a-boundary\n\xff\x00 no final newline")
	parts := []UserDataPart{
		{ContentType: "text/plain; charset=utf-8", Filename: "capi", Base64: true, Body: odd},
		{Entity: true, Body: nested},
		{ContentType: "text/cloud-config", Filename: "ours.cfg", MergeType: "list(append)+dict(no_replace,recurse_list)+str()", Body: []byte("#cloud-config\nruncmd: [x]\n")},
	}
	b, err := MultipartUserData(parts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := MultipartUserData(parts)
	if err != nil || !bytes.Equal(b, again) {
		t.Fatal("the same parts gave other bytes")
	}
	_, hdrs, bodies := readMultipart(t, b)
	if len(bodies) != 3 {
		t.Fatalf("%d parts", len(bodies))
	}
	if !bytes.Equal(bodies[0], odd) || hdrs[0].Get("Content-Type") != "text/plain; charset=utf-8" || hdrs[0].Get("Content-Disposition") != `attachment; filename="capi"` {
		t.Errorf("part 1: %v %q", hdrs[0], bodies[0])
	}
	// The nested message is the part: its headers are the part's.
	if mt, _, _ := mime.ParseMediaType(hdrs[1].Get("Content-Type")); mt != "multipart/mixed" || !bytes.HasSuffix(nested, bodies[1]) || !bytes.HasPrefix(bodies[1], []byte("--inner\r\n")) {
		t.Errorf("part 2: %v %q", hdrs[1], bodies[1])
	}
	if string(bodies[2]) != "#cloud-config\nruncmd: [x]\n" || hdrs[2].Get("Merge-Type") != "list(append)+dict(no_replace,recurse_list)+str()" || hdrs[2].Get("Content-Type") != "text/cloud-config" {
		t.Errorf("part 3: %v %q", hdrs[2], bodies[2])
	}
	if !strings.HasPrefix(string(b), "Content-Type: multipart/mixed; boundary=\"anvil-") {
		t.Errorf("starts %q", b[:60])
	}
	// What cloud-init's own check for MIME looks for.
	if !bytes.Contains(bytes.ToLower(b[:200]), []byte("mime-version:")) {
		t.Error("no MIME-Version near the start")
	}
}

func TestMultipartUserDataRefuses(t *testing.T) {
	for name, parts := range map[string][]UserDataPart{
		"no parts":              nil,
		"8-bit without base64":  {{ContentType: "text/plain", Body: []byte("caf\xc3\xa9")}},
		"CR without base64":     {{ContentType: "text/plain", Body: []byte("a\r\nb")}},
		"newline in a header":   {{ContentType: "text/plain\nX-Evil: 1", Body: []byte("a")}},
		"quote in the filename": {{ContentType: "text/plain", Filename: `a"b`, Body: []byte("a")}},
	} {
		if _, err := MultipartUserData(parts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Valid multipart user-data passes the renderer's own user-data check.
func TestMultipartUserDataValidates(t *testing.T) {
	b, err := MultipartUserData([]UserDataPart{{ContentType: "text/cloud-config", Body: []byte("#cloud-config\n{}\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if te := validateUserData("user-data", b, newLineMap("", string(b)), scrubber{}); te != nil {
		t.Fatal(te)
	}
}
