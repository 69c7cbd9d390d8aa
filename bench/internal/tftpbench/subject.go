package tftpbench

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/pxe/tftp"
)

// SubjectOptions configures Anvil's TFTP server as a benchmark subject.
type SubjectOptions struct {
	Root          string
	Interface     string
	Addr          netip.AddrPort
	MaxConcurrent int
	LogFile       string
}

// ServeAnvil runs pxe/tftp until ctx is done, in this process's network
// namespace, and prints "ready" once the socket is open.
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
	// Every atftp client comes from one address; the per-source cap (8) is
	// for booting hosts, one address each.
	srv, err := tftp.NewServer(tftp.Options{Root: o.Root, Interface: o.Interface, ListenAddr: o.Addr, MaxConcurrent: o.MaxConcurrent,
		MaxPerSource: 1 << 16, Logger: log})
	if err != nil {
		return err
	}
	fmt.Println("ready")
	return srv.Serve(ctx)
}
