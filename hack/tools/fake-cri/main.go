// Command fake-cri serves upstream's fake CRI runtime and image service
// (k8s.io/cri-client/pkg/fake) on a unix socket, so a real kubelet can run
// and register a Ready Node where no container runtime exists (the QEMU lab).
// Start reports RuntimeReady and NetworkReady; pods are only bookkeeping:
// their containers "run" (and are Ready) without a process.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

func main() {
	endpoint := flag.String("listen", "/run/fake-cri/fake-cri.sock", "unix socket path (or unix:// URL) to serve the CRI on")
	flag.Parse()
	path := *endpoint
	if p, ok := cutPrefix(path, "unix://"); ok {
		path = p
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fail(err)
	}
	_ = os.Remove(path) // a stale socket from an earlier run
	rt := fake.NewFakeRemoteRuntime()
	// Answer RuntimeConfig with the cgroup driver the lab kubelet uses, so
	// the kubelet neither falls back nor guesses.
	rt.RuntimeService.FakeLinuxConfiguration = &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_CGROUPFS}
	// "Pulled" images get a size: the kubelet refuses an image whose size
	// is 0 (ImageInspectError), so pods would never start.
	rt.ImageService.SetFakeImageSize(1 << 20)
	if err := rt.Start("unix://" + path); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "fake-cri: serving on unix://%s\n", path)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	rt.Stop()
	_ = os.Remove(path)
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return s, false
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fake-cri:", err)
	os.Exit(1)
}
