// Command anvil-bench measures Anvil's network boot services and config
// rendering side by side with the tools users would run instead (Kea,
// dnsmasq, atftpd, tftpd-hpa, nginx), on the same machine, with the same
// data, in the same run, and writes bench/RESULTS.md.
//
//	anvil-bench run [--smoke] [--only dhcp,tftp,http,render] [--out results.json]
//	anvil-bench report --in results.json --out RESULTS.md
//
// Network benchmarks need root: they create two network namespaces joined
// by a veth pair and never send a packet outside them. See bench/README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runCmd(ctx, os.Args[2:])
	case "report":
		err = reportCmd(os.Args[2:])
	case "merge":
		err = mergeCmd(os.Args[2:])
	case "subject":
		err = subjectCmd(ctx, os.Args[2:])
	case "load":
		err = loadCmd(ctx, os.Args[2:])
	case "-h", "--help", "help":
		usage()
		return
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "anvil-bench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  anvil-bench run [--smoke] [--only dhcp,tftp,http,render,storm,scale,rollout,console] [--runs N] [--out FILE | --merge FILE] [--anvil BIN] [--kubectl BIN]
      run the benchmarks (root; network ones in private namespaces) and write raw results as JSON
  anvil-bench merge --in FILE --only scale,rollout [--into bench/results.json]
      copy parts of a results file (measured with --out) into another, keeping its other parts
  anvil-bench report --in FILE [--out RESULTS.md]
      write the Markdown report (medians, peers, ratios) from a results file
Internal (started by run inside the namespaces):
  anvil-bench subject dhcp|tftp|http ...   Anvil's server as a benchmark subject
  anvil-bench load dhcp ...                the broadcast DHCP load generator (as PXE firmware sends)
  anvil-bench load http ...                the HTTP load generator
  anvil-bench load tftp ...                the TFTP load generator (runs atftp clients)
  anvil-bench load storm --config F --out F  the boot storm's simulated hosts (firmware, iPXE, OS)
`)
}
