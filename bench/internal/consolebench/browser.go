package consolebench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"

	"anvil.dev/anvil/bench/internal/proc"
	"anvil.dev/anvil/bench/internal/results"
)

// browser is headless Chromium driven by chromedp, as test/console does.
type browser struct {
	ctx    context.Context
	cancel func()
	pid    int
}

func newBrowser(ctx context.Context, chromium, dir string) (*browser, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // the benchmarks may run as root
		chromedp.UserDataDir(dir),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancel := chromedp.NewContext(actx)
	b := &browser{ctx: bctx, cancel: func() { cancel(); cancelA(); _ = os.RemoveAll(dir) }}
	if err := chromedp.Do(bctx); err != nil {
		b.cancel()
		return nil, fmt.Errorf("starting %s: %w", chromium, err)
	}
	if p := chromedp.FromContext(bctx).Browser.Process(); p != nil {
		b.pid = p.Pid
	}
	// Marks of every page: the first frame after the HTML is parsed, and
	// the live stream open (the console sets body[data-live-state]).
	if _, err := chromedp.Call(bctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: marks}); err != nil {
		b.cancel()
		return nil, err
	}
	if _, err := chromedp.Call(bctx, performance.Enable, performance.EnableParams{}); err != nil {
		b.cancel()
		return nil, err
	}
	return b, nil
}

const marks = `(() => {
  const t = window.__benchT = {};
  const mark = (k) => { if (!(k in t)) t[k] = performance.now(); };
  document.addEventListener("DOMContentLoaded", () => requestAnimationFrame(() => setTimeout(() => mark("rendered"), 0)));
  const mo = new MutationObserver(() => {
    if (document.body && document.body.dataset.liveState === "open") { mark("liveOpen"); mo.disconnect(); }
  });
  mo.observe(document, {subtree: true, attributes: true, attributeFilter: ["data-live-state"]});
})();`

func (b *browser) close() { b.cancel() }

func (b *browser) do(what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		return fmt.Errorf("browser: %s: %w", what, err)
	}
	return nil
}

func eval[T any](b *browser, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		return v, fmt.Errorf("browser: evaluating %.60q: %w", expr, err)
	}
	return v, nil
}

// until waits for a JavaScript expression to hold in the page.
func until(expr string, interval, timeout time.Duration) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[any](expr, chromedp.WithPollingInterval(interval), chromedp.WithPollingTimeout(timeout))
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for {
			_, err := poll(ctx, t)
			if err == nil {
				return nil
			}
			// The document was replaced under the poll (a redirect or a
			// reload right after Navigate): poll the new one. ctx bounds it.
			if strings.Contains(err.Error(), "Cannot find context with specified id") && ctx.Err() == nil {
				select {
				case <-ctx.Done():
				case <-time.After(interval):
				}
				continue
			}
			return fmt.Errorf("waiting for %s: %w", expr, err)
		}
	})
}

func (b *browser) signIn(base, token string) error {
	// Signed in, the console shows the racks unless told where to go: a
	// static file, so that the first /racks load below is the one that
	// lists the Hosts (the person's store starts there).
	if err := b.do("sign in at "+base+"/login", 2*time.Minute, chromedp.Navigate(base+"/login?next=%2Fstatic%2Fconsole.css"),
		chromedp.WaitVisible(chromedp.ID("token")), chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("sign-in"))); err != nil {
		return err
	}
	// The page navigates away: evaluating fails until the next one is there.
	var last string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if p, err := eval[string](b, `location.pathname + " " + (document.body ? document.body.innerText.slice(0, 200) : "")`); err == nil {
			if strings.HasPrefix(p, "/static/console.css ") {
				return nil
			}
			last = p
		}
	}
	return fmt.Errorf("browser: signing in at %s/login did not lead on; the page says %q", base, last)
}

const loaded = `document.querySelector("a.tile") !== null && document.body.dataset.liveState === "open" && window.__benchT && "rendered" in window.__benchT`

// load navigates to url and times it until the tiles are rendered and the
// live stream is open.
func (b *browser) load(url string) (results.PageLoad, error) {
	var pl results.PageLoad
	start := time.Now()
	if err := b.do("open "+url, 3*time.Minute, chromedp.Navigate(url), until(loaded, 20*time.Millisecond, 2*time.Minute)); err != nil {
		return pl, err
	}
	wall := time.Since(start)
	pl, err := eval[results.PageLoad](b, `(() => {
	  const n = performance.getEntriesByType("navigation")[0], t = window.__benchT;
	  return {responseEnd: n.responseEnd, domContentLoaded: n.domContentLoadedEventEnd, rendered: t.rendered, liveOpen: t.liveOpen,
	    tiles: document.querySelectorAll("a.tile").length, racks: document.querySelectorAll("section.rack").length, htmlBytes: n.encodedBodySize};
	})()`)
	if err != nil {
		return pl, err
	}
	pl.Ready = max(pl.Rendered, pl.LiveOpen)
	pl.WallMs = float64(wall.Microseconds()) / 1000
	return pl, nil
}

// memory collects garbage, then reads the page's metrics and the
// processes' RSS.
func (b *browser) memory() (results.BrowserMemory, error) {
	var m results.BrowserMemory
	if _, err := chromedp.Call(b.ctx, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
		return m, fmt.Errorf("browser: HeapProfiler.collectGarbage: %w", err)
	}
	res, err := chromedp.Call(b.ctx, performance.GetMetrics, cdp.Empty{})
	if err != nil {
		return m, fmt.Errorf("browser: Performance.getMetrics: %w", err)
	}
	for _, x := range res.Metrics {
		switch x.Name {
		case "JSHeapUsedSize":
			m.JSHeapUsed = x.Value
		case "JSHeapTotalSize":
			m.JSHeapTotal = x.Value
		case "Nodes":
			m.DOMNodes = x.Value
		}
	}
	n, err := eval[int](b, `document.getElementsByTagName("*").length`)
	if err != nil {
		return m, err
	}
	m.Elements = float64(n)
	if b.pid > 0 {
		if u, err := proc.Sample(b.pid); err == nil {
			m.ChromiumRSS = u.RSS
		}
		for _, pid := range descendants(b.pid) {
			cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if !strings.Contains(string(cmd), "--type=renderer") {
				continue
			}
			// The tab's renderer is the biggest (a spare one may wait idle).
			if u, err := proc.Sample(pid); err == nil && u.RSS > m.RendererRSS {
				m.RendererRSS = u.RSS
			}
		}
	}
	return m, nil
}

// descendants of pid, from /proc/*/task/*/children.
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// observe installs the MutationObserver that timestamps tiles reaching
// their wanted data-power: window.__bench.want[id] = power; seen[id] =
// Date.now() when the DOM has it.
func (b *browser) observe() error {
	_, err := eval[bool](b, `(() => {
	  const s = window.__bench = {want: {}, seen: {}};
	  new MutationObserver(() => {
	    for (const id in s.want) {
	      const el = document.getElementById(id);
	      if (el && el.dataset.power === s.want[id]) { s.seen[id] = Date.now(); delete s.want[id]; }
	    }
	  }).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ["data-power"]});
	  return true;
	})()`)
	return err
}

// tile is one Host tile on the page.
type tile struct {
	ID    string `json:"id"`
	Power string `json:"power"`
}

func (b *browser) tiles() ([]tile, error) {
	return eval[[]tile](b, `Array.from(document.querySelectorAll("a.tile")).map(a => ({id: a.id, power: a.dataset.power}))`)
}

func (b *browser) want(ids []string, power []string) error {
	m := map[string]string{}
	for i, id := range ids {
		m[id] = power[i]
	}
	j, _ := json.Marshal(m)
	_, err := eval[bool](b, `Object.assign(window.__bench.want, `+string(j)+`) && true`)
	return err
}

// seen waits until every id was seen (or timeout) and returns the Date.now()
// ms of those that were.
func (b *browser) seen(ids []string, timeout time.Duration) (map[string]float64, error) {
	j, _ := json.Marshal(ids)
	cond := `(${ids}).every(id => id in window.__bench.seen)`
	_ = b.do("wait for the tiles", timeout, until(strings.Replace(cond, "${ids}", string(j), 1), 10*time.Millisecond, timeout))
	return eval[map[string]float64](b, `(() => { const o = {}; for (const id of `+string(j)+`) if (id in window.__bench.seen) o[id] = window.__bench.seen[id]; return o; })()`)
}

func (b *browser) liveUpdates() int {
	n, _ := eval[string](b, `document.body.dataset.liveUpdates || "0"`)
	v, _ := strconv.Atoi(n)
	return v
}
