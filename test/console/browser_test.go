package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/need"
)

// browser is headless Chromium (Debian's chromium) driven by chromedp.
type browser struct {
	ctx context.Context
	t   *testing.T
}

func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	need.OrSkip(t, "chromium is not installed (Debian package chromium; .ci/run installs it)")
	return ""
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // the tests run as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	// window.confirm() of an action: the admin says yes.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return &browser{ctx: ctx, t: t}
}

func (b *browser) fail(what string, err error) {
	b.t.Helper()
	html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("body")))
	if len(html) > 6000 {
		html = html[:6000] + "…"
	}
	b.t.Fatalf("%s: %v\npage body:\n%s", what, err, html)
}

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 3*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fail(what, err)
	}
}

// eval runs JavaScript in the page and returns its value.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.fail("evaluate "+expr, err)
	}
	return v
}

// until waits for a JavaScript expression to hold in the page.
func until(expr string, timeout time.Duration) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[any](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(timeout))
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := poll(ctx, t)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", expr, err)
		}
		return nil
	})
}

func (b *browser) screenshot(dir, name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.fail("screenshot "+name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", filepath.Join(dir, name))
}

func (b *browser) signIn(base, token string) {
	b.t.Helper()
	b.do("sign in", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("sign-in")),
		chromedp.WaitVisible(chromedp.ID("regions")), until(`document.body.dataset.liveState === "open"`, 30*time.Second))
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.fail("read "+sel, err)
	}
	return s
}

func tileID(ns, name string) string { return "h-" + ns + "--" + name }

// TestConsole is the admin's session: sign in with a token, see the
// racks with the Host whose BMC is down marked red with the reason, power
// a Host on and watch its tile change without a reload, start an in-place
// upgrade of a Machine (a preview first) and watch it step to done; then
// a read-only person's power action is refused by RBAC with a clear
// message. Screenshots of the pages go to bin/test-logs/console.
func TestConsole(t *testing.T) {
	s := newStack(t, 6, true)
	ctx := context.Background()
	admin := s.token(t, "alice", "anvil-operator")
	viewer := s.token(t, "victor", "anvil-viewer")

	m := &metalv1.Machine{}
	m.Name, m.Namespace = "m1", s.ns
	m.Spec = metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "sim"}, Version: oldVersion}
	m.Spec.HostSelector.MatchLabels = map[string]string{metalv1.LabelRack: "r1"}
	mustCreate(t, s.c, m)
	set := &metalv1.MachineSet{}
	set.Name, set.Namespace = "web", s.ns
	set.Spec.Replicas = ptr.To[int32](2)
	set.Spec.Template.Spec = metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "sim"}, Version: oldVersion}
	set.Spec.Template.Spec.HostSelector.MatchLabels = map[string]string{metalv1.LabelRack: "r1"}
	mustCreate(t, s.c, set)
	eventually(t, 3*time.Minute, "MachineSet web: 2 Ready", func(ctx context.Context) (bool, string) {
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: "web"}, set); err != nil {
			return false, err.Error()
		}
		return set.Status.ReadyReplicas == 2, fmt.Sprintf("%d ready", set.Status.ReadyReplicas)
	})
	eventually(t, 3*time.Minute, "Machine m1 Ready", func(ctx context.Context) (bool, string) {
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: "m1"}, m); err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionReady), string(m.Status.Phase)
	})
	eventually(t, time.Minute, "Host dead-bmc unreachable", func(ctx context.Context) (bool, string) {
		h := &metalv1.Host{}
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: "dead-bmc"}, h); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionBMCReachable)
		return c != nil && c.Status == "False", string(h.Status.State)
	})

	b := newBrowser(t)
	b.signIn(s.console, admin)
	if u := b.text("#user"); u != "system:serviceaccount:"+s.ns+":alice" {
		t.Errorf("signed in as %q, want alice's ServiceAccount", u)
	}

	// The racks: two, grouped by rack and failure domain; dead-bmc red with its reason.
	dead := "#" + tileID(s.ns, "dead-bmc")
	b.do("racks", until(`document.querySelectorAll("section.rack").length === 2`, 30*time.Second),
		until(`document.querySelector("`+dead+`").dataset.health === "error"`, 30*time.Second))
	reason := eval[string](b, `document.querySelector("`+dead+`").title`)
	if !strings.Contains(reason, "BMCReachable=False") || !strings.Contains(reason, metalv1.ReasonUnreachable) {
		t.Errorf("dead-bmc's tile says %q, want its BMCReachable=False Unreachable reason", reason)
	}
	if txt := b.text("#rack-fd-b--r2 h2"); !strings.Contains(txt, "failure domain fd-b") {
		t.Errorf("rack r2's heading %q does not name its failure domain", txt)
	}
	b.screenshot(s.screenshot, "racks.png")

	// Power on sim-5 from its page; its tile changes without a reload.
	b.do("open sim-5", chromedp.Navigate(s.console+"/hosts/"+s.ns+"/sim-5"), chromedp.WaitVisible(chromedp.ID("power-on")),
		until(`document.body.dataset.liveState === "open"`, 30*time.Second),
		evalDo(`window.__noReload = true`))
	b.do("power on", chromedp.Click(chromedp.ID("power-on")),
		until(`document.getElementById("toast").textContent.length > 0`, 30*time.Second),
		until(`document.getElementById("`+tileID(s.ns, "sim-5")+`").dataset.power === "On"`, time.Minute))
	if !eval[bool](b, `window.__noReload === true`) {
		t.Error("the page reloaded to show the power change; it should have come over the live stream")
	}
	if got := s.bmcs.PowerState("sys-5"); got != "On" {
		t.Errorf("the BMC of sim-5 says power %s after the console's power on", got)
	}
	b.screenshot(s.screenshot, "host.png")

	// An in-place upgrade of m1, previewed, then followed to done.
	row := "m-" + s.ns + "--m1"
	b.do("machines", chromedp.Navigate(s.console+"/machines"), chromedp.WaitVisible(chromedp.ID(row)),
		until(`document.body.dataset.liveState === "open"`, 30*time.Second),
		evalDo(`window.__noReload = true; window.__steps = [];
			new MutationObserver(() => {
				const r = document.getElementById("`+row+`");
				const s = r ? r.dataset.upgrade : "";
				if (s && window.__steps[window.__steps.length-1] !== s) window.__steps.push(s);
			}).observe(document.body, {subtree: true, childList: true, attributes: true});`),
		chromedp.Click(chromedp.CSS("#"+row+" button[data-open]")),
		chromedp.WaitVisible(chromedp.ID("upgrade-dialog")),
		chromedp.SendKeys(chromedp.CSS(`#upgrade-form input[name="version"]`), newVersion),
		chromedp.Click(chromedp.CSS(`#upgrade-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("preview-table")))
	if p := b.text("#preview-table"); !strings.Contains(p, "InPlace") || !strings.Contains(p, "✓") {
		t.Errorf("the preview of m1 -> %s does not say in place with a passing skew check:\n%s", newVersion, p)
	}
	b.screenshot(s.screenshot, "upgrade-preview.png")
	b.do("start the upgrade", chromedp.Click(chromedp.ID("start-upgrade")),
		until(`document.getElementById("`+row+`").dataset.upgrade === "Verified"`, 3*time.Minute))
	steps := eval[[]string](b, `window.__steps`)
	t.Logf("upgrade steps seen in the browser: %v", steps)
	if !eval[bool](b, `window.__noReload === true`) {
		t.Error("the machines page reloaded during the upgrade")
	}
	if len(steps) < 2 || steps[len(steps)-1] != "Verified" || !containsAny(steps, "Draining", "Applying", "Verifying") {
		t.Errorf("the browser saw the upgrade as %v; want it step through draining or applying to Verified", steps)
	}
	if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: "m1"}, m); err != nil || m.Status.Version != newVersion {
		t.Errorf("m1 runs %q after the upgrade (err %v)", m.Status.Version, err)
	}
	// The set's rollout per failure domain, and its preview: both Machines in place.
	setID := "ms-" + s.ns + "--web"
	if txt := b.text("#" + setID); !strings.Contains(txt, "2/2 ready") || !strings.Contains(txt, "fd-a") {
		t.Errorf("MachineSet web shows %q; want 2/2 ready and its failure domain fd-a", txt)
	}
	b.do("preview the set", chromedp.Click(chromedp.CSS("#"+setID+" button[data-open]")),
		chromedp.WaitVisible(chromedp.ID("upgrade-dialog")),
		chromedp.SendKeys(chromedp.CSS(`#upgrade-form input[name="version"]`), newVersion),
		chromedp.Click(chromedp.CSS(`#upgrade-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("preview-table")))
	if n := eval[int](b, `document.querySelectorAll("#preview-table tbody tr.mode-inplace").length`); n != 2 {
		t.Errorf("the set's preview shows %d Machines in place, want 2:\n%s", n, b.text("#preview-table"))
	}
	b.do("close the preview", chromedp.Click(chromedp.CSS(`#upgrade-dialog button[data-close]`)), chromedp.WaitNotVisible(chromedp.ID("upgrade-dialog")))
	b.screenshot(s.screenshot, "machines.png")
	b.do("tickets", chromedp.Navigate(s.console+"/tickets"), chromedp.WaitVisible(chromedp.ID("tickets-deliveries")))
	b.screenshot(s.screenshot, "tickets.png")

	// Secrets: no page the admin saw carries the BMC password or a token.
	for _, p := range []string{"/racks", "/hosts/" + s.ns + "/sim-5", "/machines", "/tickets"} {
		b.do("open "+p, chromedp.Navigate(s.console+p), chromedp.WaitVisible(chromedp.ID("regions")))
		html := eval[string](b, `document.documentElement.outerHTML`)
		noSecrets(t, "page "+p, html, s.bmcs.Password(), admin, viewer)
	}

	// The read-only person: the same button, refused by RBAC, said plainly.
	b2 := newBrowser(t)
	b2.signIn(s.console, viewer)
	b2.do("viewer opens sim-4", chromedp.Navigate(s.console+"/hosts/"+s.ns+"/sim-4"), chromedp.WaitVisible(chromedp.ID("power-on")),
		chromedp.Click(chromedp.ID("power-on")), until(`document.getElementById("toast").textContent.length > 0`, 30*time.Second))
	msg := b2.text("#toast")
	if !strings.Contains(msg, "refused by RBAC") || !strings.Contains(msg, "victor") || !strings.Contains(msg, "sim-4") {
		t.Errorf("the viewer's power on says %q; want a refusal by RBAC naming the person and the Host", msg)
	}
	h := &metalv1.Host{}
	if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: "sim-4"}, h); err != nil || h.Spec.Online {
		t.Errorf("sim-4 spec.online=%t after a refused power on (err %v)", h.Spec.Online, err)
	}

	// The console's log names people and actions, never their tokens.
	if log, err := os.ReadFile(s.anvil.Controllers.Log); err == nil {
		noSecrets(t, "the controllers' log", string(log), s.bmcs.Password(), admin, viewer)
		if !strings.Contains(string(log), "console action") {
			t.Error("the console's actions are not logged")
		}
	}
}

// evalDo runs JavaScript for its effect.
func evalDo(expr string) chromedp.Action[chromedp.Void] {
	ev := chromedp.Evaluate[any](expr + ";\ntrue")
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := ev(ctx, t)
		return err
	})
}

func containsAny(list []string, want ...string) bool {
	for _, s := range list {
		for _, w := range want {
			if s == w {
				return true
			}
		}
	}
	return false
}

// TestConsoleRefusesForgedRequests: the HTTP-level guards, without a
// browser: a wrong token, an action without the CSRF token or from another
// origin, and the headers every page carries.
func TestConsoleRefusesForgedRequests(t *testing.T) {
	s := newStack(t, 1, false)
	admin := s.token(t, "alice", "anvil-operator")
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}

	resp, err := hc.PostForm(s.console+"/login", url.Values{"token": {"not-a-token"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "did not accept this token") {
		t.Errorf("a wrong token: %d %s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy %q", csp)
	}

	resp, err = hc.PostForm(s.console+"/login", url.Values{"token": {admin}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "anvil_console" {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == nil {
		t.Fatalf("sign-in: %d, cookie %v", resp.StatusCode, cookie)
	}
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || strings.Contains(cookie.Value, admin) {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, no token in it", cookie)
	}
	action := s.console + "/actions/hosts/" + s.ns + "/sim-0/power"
	post := func(header map[string]string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, action, strings.NewReader("op=on"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(cookie)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := post(nil); code != http.StatusForbidden || !strings.Contains(b, "CSRF") {
		t.Errorf("an action without the CSRF token: %d %s", code, b)
	}
	if code, b := post(map[string]string{"Origin": "https://evil.example", "X-CSRF-Token": "x"}); code != http.StatusForbidden || !strings.Contains(b, "cross-origin") {
		t.Errorf("an action from another origin: %d %s", code, b)
	}
	h := &metalv1.Host{}
	if err := s.c.Get(context.Background(), types.NamespacedName{Namespace: s.ns, Name: "sim-0"}, h); err != nil || h.Spec.Online {
		t.Errorf("sim-0 spec.online=%t after refused actions (err %v)", h.Spec.Online, err)
	}
	// Signed out, a page sends the person to sign in, keeping where they were going.
	resp, err = hc.Get(s.console + "/machines")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/login?next=") {
		t.Errorf("an anonymous page: %d to %q", resp.StatusCode, loc)
	}
	// Guessing tokens: after ten failures from one address the console
	// stops asking the API server and says why.
	codes := []int{}
	for range 10 {
		resp, err := hc.PostForm(s.console+"/login", url.Values{"token": {"guess"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	if codes[8] != http.StatusUnauthorized || codes[9] != http.StatusTooManyRequests {
		t.Errorf("ten more wrong tokens after one: %v; want 401 up to the tenth failure, then 429", codes)
	}
}
