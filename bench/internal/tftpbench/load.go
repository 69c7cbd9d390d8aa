// Package tftpbench measures TFTP throughput of Anvil's pxe/tftp against
// dnsmasq, atftpd and tftpd-hpa: concurrent atftp clients fetching the iPXE
// binaries with blksize 512 and 1468.
package tftpbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"anvil.dev/anvil/bench/internal/stats"
)

// LoadOptions configures one load generator run (inside the load namespace).
type LoadOptions struct {
	Server     string
	File       string
	Size       int64 // expected size: a shorter file is a failed transfer
	BlockSize  int
	WindowSize int // 0: not asked
	Clients    int
	Seconds    float64 // each client starts new fetches until then
	TmpDir     string
}

// LoadResult is what the load generator prints as JSON.
type LoadResult struct {
	Attempts  int     `json:"attempts"`
	Completed int     `json:"completed"`
	Bytes     int64   `json:"bytes"`
	Seconds   float64 `json:"seconds"`
	P99       float64 `json:"p99"` // seconds per completed transfer
	FirstErr  string  `json:"firstErr,omitempty"`
}

// Load runs o.Clients atftp clients in a loop and writes a LoadResult to w.
// Each transfer has a 120s timeout so a stuck client cannot hang the run.
func Load(ctx context.Context, o LoadOptions, w io.Writer) error {
	if err := os.MkdirAll(o.TmpDir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(o.TmpDir)
	deadline := time.Now().Add(time.Duration(o.Seconds * float64(time.Second)))
	var (
		mu  sync.Mutex
		res LoadResult
		dur []float64
		wg  sync.WaitGroup
	)
	args := func(local string) []string {
		a := []string{"--option", "blksize " + strconv.Itoa(o.BlockSize), "--option", "tsize 0"}
		if o.WindowSize > 0 {
			a = append(a, "--option", "windowsize "+strconv.Itoa(o.WindowSize))
		}
		return append(a, "-g", "-r", o.File, "-l", local, o.Server)
	}
	start := time.Now()
	for c := range o.Clients {
		wg.Go(func() {
			local := filepath.Join(o.TmpDir, "c"+strconv.Itoa(c))
			defer os.Remove(local)
			for first := true; first || time.Now().Before(deadline); first = false {
				if ctx.Err() != nil {
					return
				}
				_ = os.Remove(local)
				tctx, cancel := context.WithTimeout(ctx, 120*time.Second)
				t0 := time.Now()
				out, err := exec.CommandContext(tctx, "atftp", args(local)...).CombinedOutput()
				d := time.Since(t0)
				cancel()
				fi, serr := os.Stat(local)
				ok := err == nil && serr == nil && fi.Size() == o.Size
				mu.Lock()
				res.Attempts++
				if ok {
					res.Completed++
					res.Bytes += o.Size
					dur = append(dur, d.Seconds())
				} else if res.FirstErr == "" {
					res.FirstErr = fmt.Sprintf("%v: %.300s", err, out)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.P99 = stats.Finite(stats.Percentile(dur, 99))
	return json.NewEncoder(w).Encode(res)
}
