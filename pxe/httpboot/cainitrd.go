package httpboot

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
)

// CAInitrdPath is where a Server with Options.CAInitrd serves it, over
// HTTPS only.
const CAInitrdPath = "/tls/anvil-ca.cpio.gz"

// CAInitrdFile is the CA's path inside that initrd: Go programs
// (Ignition) read every file of /etc/ssl/certs as a root, so the OS's
// first fetch of its config trusts the boot server's CA. The kernel
// unpacks every initrd into the same root file system, so the file joins
// the OS's own initramfs.
const CAInitrdFile = "etc/ssl/certs/anvil-boot-ca.pem"

// CAInitrd is a gzip'd newc cpio archive holding caPEM at CAInitrdFile.
// Compressed, though tiny, because the kernel takes an uncompressed
// archive only at a 4-byte aligned offset of the initrds it is handed
// concatenated, and the OS's own initramfs before it (gzip'd, zstd'd) ends
// wherever its stream ends: after one, an uncompressed archive is dropped
// as "invalid magic" and the CA never arrives. A compressed one is found
// at any offset.
func CAInitrd(caPEM []byte) []byte {
	var b bytes.Buffer
	ino := 1
	entry := func(name string, mode int, data []byte) {
		nlink := 1
		if mode&0o040000 != 0 {
			nlink = 2
		}
		fmt.Fprintf(&b, "070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
			ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
		ino++
		b.WriteString(name)
		b.WriteByte(0)
		pad4(&b)
		b.Write(data)
		pad4(&b)
	}
	for _, d := range []string{"etc", "etc/ssl", "etc/ssl/certs"} {
		entry(d, 0o040755, nil)
	}
	entry(CAInitrdFile, 0o100644, caPEM)
	entry("TRAILER!!!", 0, nil)
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression) // a valid level: no error
	_, _ = w.Write(b.Bytes())                             // into memory: no error
	_ = w.Close()
	return z.Bytes()
}

func pad4(b *bytes.Buffer) {
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
}

type caInitrdKey struct{}

// WithCAInitrd adds the CA initrd to spec when ctx is an HTTPS request's
// of a Server that serves one (Options.CAInitrd), so the booted OS trusts
// the boot server's CA. Script sources call it on their BootSpec.
func WithCAInitrd(ctx context.Context, spec BootSpec) BootSpec {
	if on, _ := ctx.Value(caInitrdKey{}).(bool); !on || !IsTLS(ctx) || slices.Contains(spec.InitrdURLs, CAInitrdPath) {
		return spec
	}
	spec.InitrdURLs = append(slices.Clone(spec.InitrdURLs), CAInitrdPath)
	return spec
}

func (s *Server) serveCAInitrd(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(s.opts.CAInitrd)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(s.opts.CAInitrd)
	}
}
