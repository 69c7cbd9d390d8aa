package httpboot

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// TestCAInitrd extracts the archive with busybox cpio, the newc reader
// closest to the kernel's. It is gzip'd: the kernel finds a compressed
// archive after another at any offset (an uncompressed one only at a
// 4-byte aligned one).
func TestCAInitrd(t *testing.T) {
	if _, err := exec.LookPath("busybox"); err != nil {
		t.Skip("busybox not installed")
	}
	pem := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	z, err := gzip.NewReader(bytes.NewReader(CAInitrd(pem)))
	if err != nil {
		t.Fatalf("the CA initrd is not gzip'd: %v", err)
	}
	dir := t.TempDir()
	cmd := exec.Command("busybox", "cpio", "-i", "-d", "-H", "newc")
	cmd.Dir, cmd.Stdin = dir, z
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("busybox cpio: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, CAInitrdFile))
	if err != nil || !bytes.Equal(got, pem) {
		t.Fatalf("%s after extraction: %q, %v", CAInitrdFile, got, err)
	}
}

func TestWithCAInitrd(t *testing.T) {
	spec := BootSpec{KernelURL: "/k", InitrdURLs: []string{"/i"}}
	served := context.WithValue(context.Background(), caInitrdKey{}, true)
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want []string
	}{
		{"plain HTTP", context.Background(), []string{"/i"}},
		{"HTTPS without a CA initrd", ContextWithTLS(context.Background()), []string{"/i"}},
		{"CA initrd served, plain HTTP", served, []string{"/i"}},
		{"HTTPS with a CA initrd", ContextWithTLS(served), []string{"/i", CAInitrdPath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := WithCAInitrd(tc.ctx, spec)
			if !reflect.DeepEqual(got.InitrdURLs, tc.want) {
				t.Errorf("initrds %v, want %v", got.InitrdURLs, tc.want)
			}
			if len(spec.InitrdURLs) != 1 {
				t.Error("the caller's BootSpec was modified")
			}
		})
	}
}
