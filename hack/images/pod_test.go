package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pod-images writes the pause and web archives the host image imports:
// one linux/amd64 image each, named anvil.local/<name>:1, byte-identical
// when built twice; the binaries taken out of them are static and work.
func TestPodImages(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the binaries with")
	}
	out1, out2 := t.TempDir(), t.TempDir()
	created := time.Unix(testEpoch, 0).UTC()
	files, err := buildPodImages(out1, "go", created)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(out1, "pause.oci.tar"), filepath.Join(out1, "web.oci.tar")}; !slices.Equal(files, want) {
		t.Fatalf("wrote %v, want %v", files, want)
	}
	again, err := buildPodImages(out2, "go", created)
	if err != nil {
		t.Fatal(err)
	}
	bins := map[string][]byte{}
	for i, f := range files {
		b1, _ := os.ReadFile(f)
		b2, _ := os.ReadFile(again[i])
		if !bytes.Equal(b1, b2) {
			t.Errorf("%s differs between two builds of the same source", filepath.Base(f))
		}
		name := podSpecs[i].name
		bins[name] = checkPodImage(t, f, name, podSpecs[i].user)
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return // the binaries are linux/amd64
	}
	t.Run("web", func(t *testing.T) { checkWeb(t, bins["web"]) })
	t.Run("pause", func(t *testing.T) { checkPause(t, bins["pause"]) })
}

// checkPodImage reads the archive back and returns the image's binary.
func checkPodImage(t *testing.T, file, name, user string) []byte {
	t.Helper()
	a := readArchive(t, file)
	var top index
	a.json(a.files["index.json"], &top)
	if len(top.Manifests) != 1 || top.Manifests[0].Annotations["io.containerd.image.name"] != "anvil.local/"+name+":1" {
		t.Fatalf("%s index.json: %+v", name, top.Manifests)
	}
	var idx index
	a.json(a.blob(top.Manifests[0]), &idx)
	if len(idx.Manifests) != 1 || idx.Manifests[0].Platform == nil || idx.Manifests[0].Platform.OS+"/"+idx.Manifests[0].Platform.Architecture != "linux/amd64" {
		t.Fatalf("%s image index: %+v", name, idx.Manifests)
	}
	var man manifest
	a.json(a.blob(idx.Manifests[0]), &man)
	var cfg imageConfig
	a.json(a.blob(man.Config), &cfg)
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/" + name}) || cfg.Config.User != user || !cfg.Created.Equal(time.Unix(testEpoch, 0)) {
		t.Errorf("%s config: entrypoint %q user %q created %s", name, cfg.Config.Entrypoint, cfg.Config.User, cfg.Created)
	}
	fs := a.rootfs(man, cfg)
	bin, ok := fs["/"+name]
	if len(fs) != 1 || !ok || bin.hdr.Mode != 0o755 {
		t.Fatalf("%s: layer holds %d files, want only a 0755 /%s", name, len(fs), name)
	}
	checkELF(t, "linux/amd64", bin.data)
	return bin.data
}

func writeBin(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// web answers GET / with the hostname and a counter, on PORT, and exits 0
// on SIGTERM.
func checkWeb(t *testing.T, b []byte) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(writeBin(t, "web", b))
	cmd.Env = []string{fmt.Sprintf("PORT=%d", port)}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// It says when it listens; wait for that line, not for a time.
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil || !strings.Contains(line, fmt.Sprintf("listening on :%d", port)) {
		t.Fatalf("web's first line %q (%v)", line, err)
	}
	go io.Copy(io.Discard, stderr)
	host, _ := os.Hostname()
	for i := 1; i <= 2; i++ {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := fmt.Sprintf("hostname=%s count=%d\n", host, i); string(body) != want {
			t.Errorf("GET / #%d: %q, want %q", i, body, want)
		}
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/other", port))
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /other: %s, want 404", resp.Status)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("web after SIGTERM: %v, want exit 0", err)
	}
}

// pause runs until SIGTERM and then exits 0.
func checkPause(t *testing.T, b []byte) {
	cmd := exec.Command(writeBin(t, "pause", b))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer cmd.Process.Kill()
	// A SIGTERM before its handler is in would kill it by default: wait
	// for the line it prints once the handler is in.
	if line, err := bufio.NewReader(stderr).ReadString('\n'); err != nil || !strings.Contains(line, "waiting for SIGTERM") {
		t.Fatalf("pause's first line %q (%v)", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("pause after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("pause still running 30s after SIGTERM")
	}
}
