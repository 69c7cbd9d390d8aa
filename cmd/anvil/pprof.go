package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/go-logr/logr"
)

// validatePprofAddr checks --pprof-bind-address: empty (off) or HOST:PORT.
func validatePprofAddr(addr string) error {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--pprof-bind-address %q: want HOST:PORT, e.g. 127.0.0.1:6060 (%v)", addr, err)
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
		return fmt.Errorf("--pprof-bind-address %q: port %q is not a number from 1 to 65535", addr, port)
	}
	if host != "" && host != "localhost" && net.ParseIP(host) == nil {
		return fmt.Errorf("--pprof-bind-address %q: host %q is not an IP address (use 127.0.0.1 to keep the profiles local)", addr, host)
	}
	return nil
}

// pprofServer serves net/http/pprof on its own listener and mux: never on
// the boot or metrics listeners, which clients on the provisioning network
// reach. (Importing net/http/pprof also registers it on
// http.DefaultServeMux, which no Anvil server uses.) It runs on every replica (not only the leader): the netboot
// processes are the ones worth profiling in a boot storm.
type pprofServer struct {
	ln  net.Listener
	log logr.Logger
}

// newPprofServer listens at once, so a bad or busy address fails
// `anvil serve` at start instead of in the background.
func newPprofServer(addr string, log logr.Logger) (*pprofServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-bind-address: %w", err)
	}
	return &pprofServer{ln: ln, log: log.WithName("pprof")}, nil
}

func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// NeedLeaderElection: run on every replica.
func (p *pprofServer) NeedLeaderElection() bool { return false }

// Start serves until ctx is done.
func (p *pprofServer) Start(ctx context.Context) error {
	srv := &http.Server{Handler: pprofMux(), ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	defer stop()
	p.log.Info("serving pprof", "addr", p.ln.Addr().String())
	if err := srv.Serve(p.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("pprof server: %w", err)
	}
	return nil
}
