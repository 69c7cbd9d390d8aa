// Command fakekubelet stands in for a kubelet in the agent's upgrade tests.
// It is built by the tests with its version (and whether it is healthy)
// baked in:
//
//	go build -ldflags "-X main.version=v1.37.0 -X main.healthy=false"
//
// It serves /healthz ("ok", or 500 when built unhealthy) and /version on
// --healthz-bind-address:--healthz-port, prints "Kubernetes <version>" for
// --version, and, given an API server and client certificate, posts its
// Node's status like a kubelet: nodeInfo.kubeletVersion and the Ready
// condition (True only when healthy).
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	version = "v0.0.0"
	healthy = "true"
)

func main() {
	showVersion := flag.Bool("version", false, "print the version")
	bind := flag.String("healthz-bind-address", "127.0.0.1", "")
	port := flag.Int("healthz-port", 10248, "")
	node := flag.String("node-name", "", "")
	apiserver := flag.String("apiserver", "", "API server URL")
	cert := flag.String("client-cert", "", "")
	key := flag.String("client-key", "", "")
	ca := flag.String("ca-file", "", "")
	// Tests are killed sometimes; a fake kubelet in its own session would
	// then live on, so it ends itself after this long.
	lifetime := flag.Duration("max-lifetime", 10*time.Minute, "exit after this long")
	flag.Parse()
	if *showVersion {
		fmt.Println("Kubernetes " + version)
		return
	}
	ok := healthy == "true"
	addr := net.JoinHostPort(*bind, strconv.Itoa(*port))
	var ln net.Listener
	var err error
	for i := 0; i < 100; i++ { // the previous kubelet may still hold the port for a moment
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !ok {
			http.Error(w, "fake kubelet built unhealthy", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("/version", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, version) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("fake kubelet %s (healthy=%v) serving on %s, pid %d\n", version, ok, addr, os.Getpid())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *lifetime)
	defer cancel()
	if *apiserver != "" && *node != "" {
		go postStatus(ctx, *apiserver, *node, *cert, *key, *ca, ok)
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
}

func postStatus(ctx context.Context, apiserver, node, cert, key, ca string, ok bool) {
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client cert:", err)
		return
	}
	pool := x509.NewCertPool()
	if b, err := os.ReadFile(ca); err == nil {
		pool.AppendCertsFromPEM(b)
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool}}}
	ready, reason := "True", "KubeletReady"
	if !ok {
		ready, reason = "False", "KubeletNotReady"
	}
	now := time.Now().UTC().Format(time.RFC3339)
	body, _ := json.Marshal(map[string]any{"status": map[string]any{
		"nodeInfo": map[string]any{
			"kubeletVersion": version, "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "",
			"osImage": "", "containerRuntimeVersion": "", "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64",
		},
		"conditions": []map[string]any{{
			"type": "Ready", "status": ready, "reason": reason, "message": "fake kubelet " + version,
			"lastHeartbeatTime": now, "lastTransitionTime": now,
		}},
	}})
	for i := 0; i < 50 && ctx.Err() == nil; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPatch, strings.TrimSuffix(apiserver, "/")+"/api/v1/nodes/"+node+"/status", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/merge-patch+json")
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				fmt.Println("posted node status")
				return
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		fmt.Fprintln(os.Stderr, "posting node status:", err)
		time.Sleep(200 * time.Millisecond)
	}
}
