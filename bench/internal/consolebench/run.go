package consolebench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bench/internal/proc"
	"anvil.dev/anvil/bench/internal/results"
)

// runOnce: a fresh `anvil console`, kubectl get (cold and warm discovery
// cache), the browser's page loads, kubectl --watch started, then the
// single updates and the burst, each timed in the browser and in kubectl's
// output from the same patch.
func runOnce(ctx context.Context, o Options, c client.Client, adminKubeconfig, viewerKubeconfig, token string, idx int) (r results.ConsoleRun) {
	if err := runOnceErr(ctx, o, c, adminKubeconfig, viewerKubeconfig, token, idx, &r); err != nil {
		r.Error = err.Error()
	}
	return r
}

func runOnceErr(ctx context.Context, o Options, c client.Client, adminKubeconfig, viewerKubeconfig, token string, idx int, r *results.ConsoleRun) error {
	dir := filepath.Join(o.Dir, "run-"+strconv.Itoa(idx+1))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cons, err := startConsole(ctx, o.Anvil, adminKubeconfig, dir)
	if err != nil {
		return err
	}
	defer cons.stop()
	mon := proc.Watch(cons.pid, 250*time.Millisecond)
	defer mon.Stop()
	r.Console.IdleRSS = mon.Now().RSS
	defer func() { r.Console.PeakRSS = mon.Peak() }()

	// The peer's first render: kubectl get, with a fresh discovery cache,
	// then again.
	cache := filepath.Join(dir, "kubectl-cache")
	if r.Kubectl.GetCold, err = kubectlGet(ctx, o.Kubectl, viewerKubeconfig, cache); err != nil {
		return err
	}
	if r.Kubectl.GetWarm, err = kubectlGet(ctx, o.Kubectl, viewerKubeconfig, cache); err != nil {
		return err
	}

	b, err := newBrowser(ctx, o.Chromium, filepath.Join(o.Dir, "chromium"))
	if err != nil {
		return err
	}
	defer b.close()
	if err := b.signIn(cons.base, token); err != nil {
		return err
	}
	cpu0 := mon.Now().CPU
	page1 := cons.base + "/racks?ns=" + Namespace
	if r.FirstPage, err = b.load(page1); err != nil {
		return err
	}
	if r.FirstPage.Racks > 0 {
		next, err := eval[string](b, `(document.getElementById("next-page") || {}).href || ""`)
		if err != nil {
			return err
		}
		if next != "" {
			if r.SecondPage, err = b.load(next); err != nil {
				return err
			}
		}
	}
	if r.FirstPageWarm, err = b.load(page1); err != nil {
		return err
	}
	cpu1 := mon.Now().CPU
	r.Console.LoadCPU = cpu1 - cpu0
	time.Sleep(2 * time.Second) // let the page settle before reading memory
	if r.Loaded, err = b.memory(); err != nil {
		return err
	}

	// Hosts to patch: tiles on the page shown, power On or Off, shuffled.
	tiles, err := b.tiles()
	if err != nil {
		return err
	}
	var cand []tile
	for _, t := range tiles {
		if t.Power == string(metalv1.PowerOn) || t.Power == string(metalv1.PowerOff) {
			cand = append(cand, t)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(idx), 7))
	rng.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
	if len(cand) < o.Updates+1 {
		return fmt.Errorf("only %d tiles with power On or Off on page 1", len(cand))
	}
	single, burst := cand[:o.Updates], cand[o.Updates:min(len(cand), o.Updates+o.BurstHosts)]

	w, err := startWatch(ctx, o.Kubectl, viewerKubeconfig, cache)
	if err != nil {
		return err
	}
	defer w.stop()
	if err := w.waitAdded(o.Hosts, 5*time.Minute); err != nil {
		return err
	}
	if err := b.observe(); err != nil {
		return err
	}
	prefix := "h-" + Namespace + "--"
	cpu2 := mon.Now().CPU
	for _, t := range single {
		name, to := strings.TrimPrefix(t.ID, prefix), flip(t.Power)
		if err := b.want([]string{t.ID}, []string{to}); err != nil {
			return err
		}
		t0 := time.Now()
		if err := setPower(ctx, c, name, to); err != nil {
			return err
		}
		seen, err := b.seen([]string{t.ID}, 30*time.Second)
		if err != nil {
			return err
		}
		at, ok := seen[t.ID]
		if !ok {
			return fmt.Errorf("the tile of Host %s did not show power %s within 30s of the patch", name, to)
		}
		r.UpdateMs = append(r.UpdateMs, at-float64(t0.UnixMicro())/1000)
		got := w.waitModified(t0, map[string]string{name: to}, 30*time.Second)
		if at, ok := got[name]; ok {
			r.Kubectl.UpdateMs = append(r.Kubectl.UpdateMs, ms(at.Sub(t0)))
		} else {
			r.Kubectl.Error = fmt.Sprintf("no MODIFIED line for Host %s within 30s", name)
		}
		time.Sleep(time.Second) // apart from the console's debounce window
	}
	cpu3 := mon.Now().CPU
	r.Console.UpdateCPU = cpu3 - cpu2

	// The burst: every Host at once, 16 requests in flight.
	ids, powers, want := make([]string, len(burst)), make([]string, len(burst)), map[string]string{}
	for i, t := range burst {
		ids[i], powers[i] = t.ID, flip(t.Power)
		want[strings.TrimPrefix(t.ID, prefix)] = powers[i]
	}
	if err := b.want(ids, powers); err != nil {
		return err
	}
	updates0 := b.liveUpdates()
	r.Burst.Hosts = len(burst)
	t0 := time.Now()
	if err := patchAll(ctx, c, want); err != nil {
		return err
	}
	r.Burst.SendSeconds = time.Since(t0).Seconds()
	seen, err := b.seen(ids, 2*time.Minute)
	if err != nil {
		return err
	}
	r.Burst.Changed = len(seen)
	first, last := first(seen)
	r.Burst.FirstMs, r.Burst.AllMs = first-float64(t0.UnixMicro())/1000, last-float64(t0.UnixMicro())/1000
	r.Burst.LiveUpdates = b.liveUpdates() - updates0
	got := w.waitModified(t0, want, 2*time.Minute)
	r.Kubectl.BurstChanged = len(got)
	if len(got) > 0 {
		var times []time.Time
		for _, at := range got {
			times = append(times, at)
		}
		sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
		r.Kubectl.BurstFirstMs, r.Kubectl.BurstAllMs = ms(times[0].Sub(t0)), ms(times[len(times)-1].Sub(t0))
	}
	r.Console.BurstCPU = mon.Now().CPU - cpu3
	u := w.usage()
	r.Kubectl.WatchRSS, r.Kubectl.WatchCPU = u.RSS, u.CPU
	time.Sleep(2 * time.Second)
	if r.AfterBurst, err = b.memory(); err != nil {
		return err
	}
	if r.Burst.Changed < len(burst) {
		return fmt.Errorf("%d of %d tiles changed within 2m of the burst", r.Burst.Changed, len(burst))
	}
	return nil
}

func flip(p string) string {
	if p == string(metalv1.PowerOn) {
		return string(metalv1.PowerOff)
	}
	return string(metalv1.PowerOn)
}

func first(seen map[string]float64) (lo, hi float64) {
	n := 0
	for _, v := range seen {
		if n == 0 || v < lo {
			lo = v
		}
		if n == 0 || v > hi {
			hi = v
		}
		n++
	}
	return lo, hi
}

// setPower writes a Host's status.powerState through the status
// subresource, as the Host controller would after a BMC poll.
func setPower(ctx context.Context, c client.Client, name, power string) error {
	h := &metalv1.Host{}
	h.Name, h.Namespace = name, Namespace
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"powerState":"`+power+`"}}`))
	if err := c.Status().Patch(ctx, h, patch); err != nil {
		return fmt.Errorf("patching the status of Host %s/%s: %w", Namespace, name, err)
	}
	return nil
}

func patchAll(ctx context.Context, c client.Client, want map[string]string) error {
	var g errgroup.Group // every patch is sent; Wait returns the first error
	g.SetLimit(16)
	for n, p := range want {
		g.Go(func() error { return setPower(ctx, c, n, p) })
	}
	return g.Wait()
}

// console is a running `anvil console`.
type console struct {
	cmd  *exec.Cmd
	pid  int
	base string
	log  string
	done chan struct{}
}

func startConsole(ctx context.Context, bin, kubeconfig, dir string) (*console, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	c := &console{base: "http://" + addr, log: filepath.Join(dir, "console.log"), done: make(chan struct{})}
	f, err := os.Create(c.log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c.cmd = exec.Command(bin, "console", "--kubeconfig", kubeconfig, "--listen", addr, "--namespace", Namespace, "--log-format", "text")
	c.cmd.Stdout, c.cmd.Stderr = f, f
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s console (--anvil): %w", bin, err)
	}
	c.pid = c.cmd.Process.Pid
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := hc.Get(c.base + "/login")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c, nil
			}
		}
		select {
		case <-c.done:
			return nil, fmt.Errorf("anvil console exited: %s", tail(c.log))
		case <-ctx.Done():
			c.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("anvil console does not serve %s/login after 1m: %s", c.base, tail(c.log))
		}
	}
}

func (c *console) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}
