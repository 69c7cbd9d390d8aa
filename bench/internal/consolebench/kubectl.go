package consolebench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"anvil.dev/anvil/bench/internal/proc"
	"anvil.dev/anvil/bench/internal/results"
)

// kubectlGet times `kubectl get hosts -n NS -o wide` to its first line and
// to the end of its output; cacheDir is its discovery cache (KUBECACHEDIR).
func kubectlGet(ctx context.Context, bin, kubeconfig, cacheDir string) (results.KubectlGet, error) {
	var g results.KubectlGet
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "get", "hosts", "-n", Namespace, "-o", "wide")
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+cacheDir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return g, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return g, fmt.Errorf("starting %s: %w", bin, err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if g.Lines == 0 {
			g.FirstLineMs = ms(time.Since(start))
		}
		g.Lines++
	}
	if err := cmd.Wait(); err != nil {
		return g, fmt.Errorf("kubectl get hosts: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	g.TotalMs = ms(time.Since(start))
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		g.MaxRSS = ru.Maxrss * 1024
	}
	return g, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// watcher is `kubectl get hosts --watch --output-watch-events`, every line
// timestamped as it arrives.
type watcher struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []watchLine
	added  int
	notify chan struct{} // closed and replaced on every line
	done   chan struct{}
	stderr strings.Builder
}

type watchLine struct {
	at          time.Time
	event, name string
	power       string
}

func startWatch(ctx context.Context, bin, kubeconfig, cacheDir string) (*watcher, error) {
	w := &watcher{notify: make(chan struct{}), done: make(chan struct{})}
	w.cmd = exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "get", "hosts", "-n", Namespace, "--watch", "--output-watch-events")
	w.cmd.Env = append(os.Environ(), "KUBECACHEDIR="+cacheDir)
	w.cmd.Stderr = &w.stderr
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := w.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			at := time.Now()
			// EVENT NAME STATE POWER MACHINE REASON AGE
			f := strings.Fields(sc.Text())
			if len(f) < 4 || f[0] == "EVENT" {
				continue
			}
			w.mu.Lock()
			w.lines = append(w.lines, watchLine{at: at, event: f[0], name: f[1], power: f[3]})
			if f[0] == "ADDED" {
				w.added++
			}
			close(w.notify)
			w.notify = make(chan struct{})
			w.mu.Unlock()
		}
	}()
	return w, nil
}

// waitAdded waits for the initial list (n ADDED lines).
func (w *watcher) waitAdded(n int, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		w.mu.Lock()
		got, ch := w.added, w.notify
		w.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-w.done:
			return fmt.Errorf("kubectl get --watch ended after %d of %d Hosts: %s", got, n, strings.TrimSpace(w.stderr.String()))
		case <-deadline:
			return fmt.Errorf("kubectl get --watch listed %d of %d Hosts in %s", got, n, timeout)
		}
	}
}

// waitModified waits until every name had a MODIFIED line with its power
// after since, and returns when each arrived (those that did).
func (w *watcher) waitModified(since time.Time, want map[string]string, timeout time.Duration) map[string]time.Time {
	got := map[string]time.Time{}
	deadline := time.After(timeout)
	from := 0
	for {
		w.mu.Lock()
		lines, ch := w.lines[from:], w.notify
		from = len(w.lines)
		w.mu.Unlock()
		for _, l := range lines {
			if p, ok := want[l.name]; ok && l.event == "MODIFIED" && l.power == p && !l.at.Before(since) {
				if _, dup := got[l.name]; !dup {
					got[l.name] = l.at
				}
			}
		}
		if len(got) == len(want) {
			return got
		}
		select {
		case <-ch:
		case <-w.done:
			return got
		case <-deadline:
			return got
		}
	}
}

func (w *watcher) usage() proc.Usage {
	u, _ := proc.Sample(w.cmd.Process.Pid)
	return u
}

func (w *watcher) stop() {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		_ = w.cmd.Process.Kill()
	}
	_ = w.cmd.Wait()
}
