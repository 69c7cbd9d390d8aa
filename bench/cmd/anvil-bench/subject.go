package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"time"

	"anvil.dev/anvil/bench/internal/dhcpbench"
	"anvil.dev/anvil/bench/internal/httpbench"
	"anvil.dev/anvil/bench/internal/storm"
	"anvil.dev/anvil/bench/internal/tftpbench"
)

func subjectCmd(ctx context.Context, args []string) error {
	if len(args) < 1 {
		return fmt.Errorf("subject: want dhcp, tftp or http")
	}
	fs := flag.NewFlagSet("subject "+args[0], flag.ContinueOnError)
	switch args[0] {
	case "dhcp":
		var o dhcpbench.SubjectOptions
		var prefix string
		fs.StringVar(&o.Interface, "iface", "", "interface to serve on")
		fs.StringVar(&prefix, "prefix", "", "subnet, e.g. 198.18.0.0/16")
		fs.IntVar(&o.Reservations, "reservations", 10000, "number of reservations")
		fs.StringVar(&o.LogFile, "log", "", "log file (empty: discard)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		p, err := netip.ParsePrefix(prefix)
		if err != nil {
			return fmt.Errorf("--prefix: %w", err)
		}
		o.Prefix = p
		return dhcpbench.ServeAnvil(ctx, o)
	case "tftp":
		var o tftpbench.SubjectOptions
		var addr string
		fs.StringVar(&o.Root, "root", "", "directory to serve")
		fs.StringVar(&o.Interface, "iface", "", "interface to bind")
		fs.StringVar(&addr, "addr", "0.0.0.0:69", "listen address")
		fs.IntVar(&o.MaxConcurrent, "max", 256, "concurrent transfers")
		fs.StringVar(&o.LogFile, "log", "", "log file (empty: discard)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		a, err := netip.ParseAddrPort(addr)
		if err != nil {
			return fmt.Errorf("--addr: %w", err)
		}
		o.Addr = a
		return tftpbench.ServeAnvil(ctx, o)
	case "http":
		var o httpbench.SubjectOptions
		fs.StringVar(&o.Dir, "dir", "", "artifact directory")
		fs.StringVar(&o.File, "file", "", "artifact path")
		fs.StringVar(&o.SHA256, "sha256", "", "expected sha256 (hex)")
		fs.StringVar(&o.Addr, "addr", ":80", "listen address")
		fs.StringVar(&o.LogFile, "log", "", "access log file (empty: discard)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return httpbench.ServeAnvil(ctx, o)
	}
	return fmt.Errorf("subject: unknown %q", args[0])
}

func loadCmd(ctx context.Context, args []string) error {
	if len(args) < 1 {
		return fmt.Errorf("load: want dhcp, tftp, http or storm")
	}
	fs := flag.NewFlagSet("load "+args[0], flag.ContinueOnError)
	switch args[0] {
	case "storm":
		return storm.LoadMain(ctx, args[1:], os.Stdin, os.Stdout, os.Stderr)
	case "dhcp":
		var o dhcpbench.LoadOptions
		fs.StringVar(&o.Interface, "iface", "", "interface to send on (0.0.0.0:68 bound to it)")
		fs.StringVar(&o.MACFile, "macs", "", "client MACs, one per line (perfdhcp's -M format)")
		fs.IntVar(&o.Rate, "rate", 0, "DORA exchanges started per second")
		fs.Float64Var(&o.Seconds, "seconds", 0, "how long to keep starting them")
		fs.DurationVar(&o.Wait, "wait", 500*time.Millisecond, "wait for late replies after the last DISCOVER")
		fs.Uint64Var(&o.Seed, "seed", 1, "seed of the random MAC choice")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return dhcpbench.Load(ctx, o, os.Stdout)
	case "tftp":
		var o tftpbench.LoadOptions
		fs.StringVar(&o.Server, "server", "", "server address")
		fs.StringVar(&o.File, "file", "", "file to fetch")
		fs.Int64Var(&o.Size, "size", 0, "expected size in bytes")
		fs.IntVar(&o.BlockSize, "blksize", 512, "blksize option")
		fs.IntVar(&o.WindowSize, "windowsize", 0, "windowsize option (0: not asked)")
		fs.IntVar(&o.Clients, "clients", 1, "concurrent clients")
		fs.Float64Var(&o.Seconds, "seconds", 0, "keep fetching this long (at least one fetch per client)")
		fs.StringVar(&o.TmpDir, "tmp", "", "scratch directory for the fetched files")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return tftpbench.Load(ctx, o, os.Stdout)
	case "http":
		var o httpbench.LoadOptions
		fs.StringVar(&o.URL, "url", "", "URL to fetch")
		fs.Int64Var(&o.Size, "size", 0, "expected size in bytes")
		fs.IntVar(&o.Clients, "clients", 1, "concurrent clients (one connection each)")
		fs.IntVar(&o.Rounds, "rounds", 1, "sequential fetches per client")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return httpbench.Load(ctx, o, os.Stdout)
	}
	return fmt.Errorf("load: unknown %q", args[0])
}
