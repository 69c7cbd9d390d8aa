// Package httpbench measures boot artifact downloads (a 50 MB initrd) from
// Anvil's pxe/httpboot against nginx serving the same file, with one Go
// load generator for both.
package httpbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"anvil.dev/anvil/bench/internal/stats"
)

// LoadOptions configures one load generator run.
type LoadOptions struct {
	URL     string
	Size    int64
	Clients int
	Rounds  int // sequential fetches per client (on one keep-alive connection)
}

// LoadResult is printed as JSON by the load generator.
type LoadResult struct {
	Fetches  int     `json:"fetches"`
	Failures int     `json:"failures"`
	Bytes    int64   `json:"bytes"`
	Seconds  float64 `json:"seconds"`
	P50      float64 `json:"p50"` // seconds to last byte
	P99      float64 `json:"p99"`
	FirstErr string  `json:"firstErr,omitempty"`
}

// Load runs the clients and writes a LoadResult to w. Every fetch has a
// 5 minute timeout.
func Load(ctx context.Context, o LoadOptions, w io.Writer) error {
	var (
		mu  sync.Mutex
		res LoadResult
		dur []float64
		wg  sync.WaitGroup
	)
	start := time.Now()
	for range o.Clients {
		wg.Go(func() {
			// One connection per client, like one booting host.
			tr := &http.Transport{
				DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
				MaxIdleConnsPerHost: 1, DisableCompression: true,
			}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 5 * time.Minute}
			for range o.Rounds {
				t0 := time.Now()
				n, err := fetch(ctx, client, o.URL)
				d := time.Since(t0)
				mu.Lock()
				res.Fetches++
				res.Bytes += n
				if err == nil && n != o.Size {
					err = fmt.Errorf("got %d bytes, want %d", n, o.Size)
				}
				if err != nil {
					res.Failures++
					if res.FirstErr == "" {
						res.FirstErr = err.Error()
					}
				} else {
					dur = append(dur, d.Seconds())
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.P50 = stats.Finite(stats.Percentile(dur, 50))
	res.P99 = stats.Finite(stats.Percentile(dur, 99))
	return json.NewEncoder(w).Encode(res)
}

func fetch(ctx context.Context, c *http.Client, url string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return 0, fmt.Errorf("status %s", resp.Status)
	}
	return io.Copy(io.Discard, resp.Body)
}
