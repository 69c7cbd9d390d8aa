package upgrade

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/internal/atomicfile"
)

// Layout below Options.Root (relative to it):
//
//	opt/anvil/kubelet/<version>/kubelet   one directory per installed version
//	opt/anvil/kubelet/current             symlink -> <version> (relative)
//	var/lib/anvil-agent/upgrade.json      the state file
const (
	DefaultKubeletDir = "opt/anvil/kubelet"
	DefaultStateDir   = "var/lib/anvil-agent"
	currentLink       = "current"
	binaryName        = "kubelet"
)

// failure is an error that ends the plan (as opposed to an interruption,
// after which the step is simply run again).
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

func failf(format string, args ...any) error { return &failure{msg: fmt.Sprintf(format, args...)} }

func isFailure(err error) bool {
	var f *failure
	return errors.As(err, &f)
}

// CurrentVersion is the version `current` points to ("" when there is no
// link): the single source of truth for what the host runs.
func (u *Upgrader) CurrentVersion() (string, error) {
	t, err := os.Readlink(filepath.Join(u.kdir, currentLink))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	v := filepath.Base(t)
	if !agent.ValidVersion(v) {
		return "", fmt.Errorf("%s points to %q, not a version directory", filepath.Join(u.kdir, currentLink), t)
	}
	return v, nil
}

func (u *Upgrader) binaryPath(version string) string {
	return filepath.Join(u.kdir, version, binaryName)
}

// tmpPath is the download target of a plan; the name is derived from a
// hash so no plan ID can shape a path.
func (u *Upgrader) tmpPath(planID string) string {
	sum := sha256.Sum256([]byte(planID))
	return filepath.Join(u.kdir, ".download-"+hex.EncodeToString(sum[:8]))
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// download fetches the plan's URL into the temp file and verifies it. A
// digest mismatch, a 4xx or an oversized body fail the plan; network
// errors and 5xx are retried a bounded number of times.
func (u *Upgrader) download(ctx context.Context, st *State) error {
	if err := os.MkdirAll(u.kdir, 0o755); err != nil {
		return failf("creating %s: %v", u.kdir, err)
	}
	tmp := u.tmpPath(st.PlanID)
	var last error
	for attempt := 0; attempt < u.opts.DownloadAttempts; attempt++ {
		if attempt > 0 {
			d := u.opts.DownloadRetryDelay << (attempt - 1)
			u.log.Info("retrying kubelet download", "attempt", attempt+1, "delay", d.String(), "error", last.Error())
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
		}
		err := u.fetch(ctx, st, tmp)
		if err == nil {
			return nil
		}
		_ = os.Remove(tmp)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if isFailure(err) {
			return err
		}
		last = err
	}
	return failf("downloading kubelet %s from %s: %v", st.Version, redactURL(st.URL), last)
}

func (u *Upgrader) fetch(ctx context.Context, st *State, tmp string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.URL, nil)
	if err != nil {
		return failf("kubelet URL %s: %v", redactURL(st.URL), err)
	}
	req.Header.Set("User-Agent", "anvil-agent")
	resp, err := u.opts.HTTPClient.Do(req)
	if err != nil {
		// The error text of net/http includes the URL; keep only its safe part.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("fetching: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Anvil's artifact server says why (for example that the file
		// failed its sha256 check against the MachineClass): keep that.
		why := answerText(resp.Body)
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			return fmt.Errorf("server answered %s%s", resp.Status, why)
		}
		return failf("downloading kubelet %s from %s: server answered %s%s", st.Version, redactURL(st.URL), resp.Status, why)
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return failf("creating %s: %v", tmp, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, u.opts.MaxDownloadBytes+1))
	if err != nil {
		f.Close()
		return fmt.Errorf("reading the body: %w", err)
	}
	if n > u.opts.MaxDownloadBytes {
		f.Close()
		return failf("kubelet %s is larger than %d bytes", st.Version, u.opts.MaxDownloadBytes)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != st.SHA256 {
		f.Close()
		return failf("sha256 mismatch for kubelet %s from %s: got %s, want %s", st.Version, redactURL(st.URL), got, st.SHA256)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing the download: %w", err)
	}
	return f.Close()
}

// install moves the verified download to <version>/kubelet (0755, synced).
// It returns errNeedDownload when there is neither a verified download
// nor an installed binary with the plan's digest.
func (u *Upgrader) install(st *State) error {
	dst := u.binaryPath(st.Version)
	tmp := u.tmpPath(st.PlanID)
	if sum, err := fileSHA256(tmp); err == nil && sum == st.SHA256 {
		if sum, err := fileSHA256(dst); err == nil {
			if sum == st.SHA256 {
				return os.Remove(tmp) // already there (a resumed plan)
			}
			if st.Version == st.PreviousVersion {
				_ = os.Remove(tmp)
				return failf("kubelet %s is installed and running with a different sha256 (%s); refusing to replace it in place", st.Version, sum)
			}
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return failf("creating %s: %v", filepath.Dir(dst), err)
		}
		if err := os.Chmod(tmp, 0o755); err != nil {
			return failf("chmod %s: %v", tmp, err)
		}
		if err := os.Rename(tmp, dst); err != nil {
			return failf("installing %s: %v", dst, err)
		}
		if err := syncDir(filepath.Dir(dst)); err != nil {
			return failf("syncing %s: %v", filepath.Dir(dst), err)
		}
		return syncDir(u.kdir)
	}
	_ = os.Remove(tmp)
	if sum, err := fileSHA256(dst); err == nil && sum == st.SHA256 {
		return nil
	}
	return errNeedDownload
}

var errNeedDownload = errors.New("the verified download is gone")

// installed reports whether <version>/kubelet exists with the digest.
func (u *Upgrader) installed(version, sha string) bool {
	sum, err := fileSHA256(u.binaryPath(version))
	return err == nil && sum == sha
}

// flip points `current` at version atomically (temp symlink + rename +
// directory fsync). version "" removes the link.
func (u *Upgrader) flip(version string) error {
	link := filepath.Join(u.kdir, currentLink)
	if version == "" {
		if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return syncDir(u.kdir)
	}
	if cur, err := u.CurrentVersion(); err == nil && cur == version {
		return nil
	}
	// The temporary link is .current.tmp, which cleanup removes after a
	// crash.
	return atomicfile.Symlink(version, link)
}

// redactURL keeps scheme, host and path: a query may hold a signature.
func redactURL(raw string) string {
	p, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return (&url.URL{Scheme: p.Scheme, Host: p.Host, Path: p.Path}).String()
}

// answerText is ": " and the first line of an error answer's body, printable
// ASCII only and short, or "" when there is none.
func answerText(body io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(body, 200))
	line, _, _ := strings.Cut(string(b), "\n")
	clean := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return -1
		}
		return r
	}, line)
	if clean = strings.TrimSpace(clean); clean == "" {
		return ""
	}
	return ": " + clean
}
