// Command web is the host image's test workload: GET / answers the
// hostname and how many requests it has served, so a caller can tell which
// pod answered and that it is the same process. PORT sets the port (8080).
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	host, err := os.Hostname()
	if err != nil {
		log.Fatalf("web: hostname: %v", err)
	}
	var count atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hostname=%s count=%d\n", host, count.Add(1))
	})
	srv := &http.Server{Addr: ":" + port, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	ln, err := net.Listen("tcp", srv.Addr)
	if err != nil {
		log.Fatalf("web: %v", err)
	}
	log.Printf("web: listening on :%s", port) // after the bind: a probe may connect now
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		log.Fatalf("web: %v", err)
	}
}
