package scale

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"anvil.dev/anvil/test/simhost"
)

// profile starts CPU profiles of both anvil processes over the next d,
// written to prefix-<process>.pprof; the returned func waits for them.
// A failed profile is logged, not fatal: it is a diagnosis aid.
func (e *env) profile(ctx context.Context, d time.Duration, prefix string) (wait func()) {
	var wg sync.WaitGroup
	secs := max(1, int(d/time.Second)-1) // end inside the window
	for _, p := range []*simhost.Process{e.anvil.Controllers, e.anvil.Netboot} {
		if p.PprofURL == "" {
			continue
		}
		wg.Go(func() {
			path := prefix + "-" + p.Name + ".pprof"
			if err := fetchProfile(ctx, fmt.Sprintf("%s/profile?seconds=%d", p.PprofURL, secs), path, d+time.Minute); err != nil {
				e.o.Logf("  profile of %s: %v", p.Name, err)
				return
			}
			e.o.Logf("  CPU profile of %s over the idle window: %s", p.Name, path)
		})
	}
	return wg.Wait
}

func fetchProfile(ctx context.Context, url, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
