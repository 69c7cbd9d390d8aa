package dhcpbench

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/dhcp"
)

// SubjectOptions configures Anvil's DHCP server as a benchmark subject.
type SubjectOptions struct {
	Interface    string
	Prefix       netip.Prefix
	Reservations int
	LogFile      string
}

// ServeAnvil runs pxe/dhcp in full mode with the reservations in a
// StaticBackend (the in-memory index the informer-backed one also is) until
// ctx is done. It runs in the calling process's network namespace. It
// prints "ready" on stdout once the socket is open.
func ServeAnvil(ctx context.Context, o SubjectOptions) error {
	rs, err := Reservations(o.Prefix, o.Reservations)
	if err != nil {
		return err
	}
	backend := pxe.NewStaticBackend(Records(rs, o.Prefix.Bits())...)
	log, closeLog, err := fileLogger(o.LogFile)
	if err != nil {
		return err
	}
	defer closeLog()
	srv, err := dhcp.NewServer(dhcp.Options{
		Interface: o.Interface,
		Backend:   backend,
		Subnets:   []dhcp.Subnet{{Prefix: o.Prefix}},
		Logger:    log,
	})
	if err != nil {
		return err
	}
	fmt.Println("ready")
	return srv.Serve(ctx)
}

// fileLogger is the logger `anvil serve` uses (slog JSON, info level),
// writing to a file, or discarding when path is empty.
func fileLogger(path string) (logr.Logger, func(), error) {
	if path == "" {
		return logr.Discard(), func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return logr.Logger{}, nil, err
	}
	h := slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo})
	return logr.FromSlogHandler(h), func() { f.Close() }, nil
}
