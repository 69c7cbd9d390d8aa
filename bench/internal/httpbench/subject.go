package httpbench

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/pxe/httpboot"
)

// SubjectOptions configures Anvil's boot HTTP server as a subject.
type SubjectOptions struct {
	Dir     string // artifact directory
	File    string // artifact path under /artifacts/
	SHA256  string
	Addr    string
	LogFile string
}

// ServeAnvil runs pxe/httpboot serving one verified artifact until ctx is
// done, and prints "ready" once listening.
func ServeAnvil(ctx context.Context, o SubjectOptions) error {
	log := logr.Discard()
	if o.LogFile != "" {
		f, err := os.Create(o.LogFile)
		if err != nil {
			return err
		}
		defer f.Close()
		log = logr.FromSlogHandler(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	srv, err := httpboot.New(httpboot.Options{
		ArtifactDir: o.Dir,
		Artifacts:   httpboot.ArtifactMap{o.File: {SHA256: o.SHA256}},
		Logger:      log,
		// Every load generator client comes from one address; the
		// per-source cap (16) is for booting hosts, one address each.
		MaxConnsPerSource: 1 << 16,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	return srv.Serve(ctx, ln)
}
