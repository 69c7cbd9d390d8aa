package httpbench

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"anvil.dev/anvil/bench/internal/harness"
	"anvil.dev/anvil/bench/internal/results"
)

// Options selects file size, client counts and rounds per client count.
type Options struct {
	FileBytes int64
	Clients   []int
	// Rounds per client for each entry of Clients, so every cell moves
	// enough bytes to take a few seconds.
	Rounds []int
}

func DefaultOptions() Options {
	return Options{FileBytes: 50 << 20, Clients: []int{1, 20, 100}, Rounds: []int{20, 3, 1}}
}

func SmokeOptions() Options {
	return Options{FileBytes: 5 << 20, Clients: []int{1, 10}, Rounds: []int{2, 1}}
}

const fileName = "initrd.img"

type subject struct {
	name, config string
	start        func(env *harness.Env, dir, sum string) (*harness.Proc, error)
}

func subjects(env *harness.Env) []subject {
	addr := env.Pair.SrvIP.String() + ":80"
	return []subject{
		{"anvil", "pxe/httpboot /artifacts/ (sha256 verified once per file version, sendfile), slog JSON access log to a file",
			func(env *harness.Env, dir, sum string) (*harness.Proc, error) {
				return env.Start("anvil-http", env.Self, "subject", "http", "--dir", dir, "--file", fileName, "--sha256", sum,
					"--addr", addr, "--log", filepath.Join(env.Dir, "anvil-http.jsonl"))
			}},
		{"nginx", "worker_processes 1, sendfile on, tcp_nopush on, access log to a file",
			func(env *harness.Env, dir, _ string) (*harness.Proc, error) {
				conf, err := nginxConfig(env.Dir, dir, addr)
				if err != nil {
					return nil, err
				}
				return env.Start("nginx", "nginx", "-c", conf, "-p", env.Dir)
			}},
	}
}

func nginxConfig(scratch, dir, addr string) (string, error) {
	conf := fmt.Sprintf(`worker_processes 1;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log %[1]s/nginx-access.log;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 120s;
  default_type application/octet-stream;
  client_body_temp_path %[1]s/nginx-tmp;
  proxy_temp_path %[1]s/nginx-tmp;
  fastcgi_temp_path %[1]s/nginx-tmp;
  uwsgi_temp_path %[1]s/nginx-tmp;
  scgi_temp_path %[1]s/nginx-tmp;
  server {
    listen %[2]s;
    location /artifacts/ { alias %[3]s/; }
  }
}
`, scratch, addr, dir)
	path := filepath.Join(scratch, "nginx.conf")
	return path, os.WriteFile(path, []byte(conf), 0o644)
}

// Run measures every subject env.Runs times for each client count.
func Run(ctx context.Context, env *harness.Env, o Options) *results.HTTP {
	out := &results.HTTP{FileBytes: o.FileBytes}
	dir := filepath.Join(env.Dir, "artifacts")
	sum, err := makeFile(dir, o.FileBytes)
	if err != nil {
		out.Subjects = append(out.Subjects, results.HTTPSubject{Name: "all", Error: err.Error()})
		return out
	}
	subs := subjects(env)
	for _, s := range subs {
		hs := results.HTTPSubject{Name: s.name, Config: s.config}
		for _, c := range o.Clients {
			hs.Cells = append(hs.Cells, results.HTTPCell{Clients: c})
		}
		out.Subjects = append(out.Subjects, hs)
	}
	url := fmt.Sprintf("http://%s/artifacts/%s", env.Pair.SrvIP, fileName)
	for run := range env.Runs {
		for i, s := range subs {
			sub := &out.Subjects[i]
			if ctx.Err() != nil || sub.Error != "" {
				continue
			}
			env.Logf("http: %s run %d/%d", s.name, run+1, env.Runs)
			if err := runSubject(ctx, env, o, s, dir, sum, url, sub); err != nil {
				sub.Error = err.Error()
				env.Logf("http: %s: %v", s.name, err)
			}
		}
	}
	return out
}

func runSubject(ctx context.Context, env *harness.Env, o Options, s subject, dir, sum, url string, sub *results.HTTPSubject) error {
	p, err := s.start(env, dir, sum)
	if err != nil {
		return err
	}
	defer p.Stop()
	// Ready once the whole file arrives; for Anvil the first request also
	// hashes the file (once per file version), which is timed here.
	t0 := time.Now()
	err = p.WaitReady(30*time.Second, func() error {
		lr, err := load(ctx, env, LoadOptions{URL: url, Size: o.FileBytes, Clients: 1, Rounds: 1})
		if err == nil && lr.Failures > 0 {
			err = fmt.Errorf("probe fetch failed: %s", lr.FirstErr)
		}
		return err
	})
	if err != nil {
		return err
	}
	if sub.FirstFetch == 0 {
		sub.FirstFetch = time.Since(t0).Seconds()
	}
	for i, c := range o.Clients {
		p.Mon.ResetPeak()
		u0, t0 := p.Mon.Now(), time.Now()
		lr, err := load(ctx, env, LoadOptions{URL: url, Size: o.FileBytes, Clients: c, Rounds: o.Rounds[i]})
		if err != nil {
			return err
		}
		u1, wall := p.Mon.Now(), time.Since(t0)
		if p.Exited() {
			return fmt.Errorf("server exited:\n%s", p.Tail(2000))
		}
		m := results.HTTPMeasure{Fetches: lr.Fetches, Failures: lr.Failures, Bytes: lr.Bytes, Seconds: lr.Seconds,
			P50: lr.P50, P99: lr.P99, CPU: (u1.CPU - u0.CPU) / wall.Seconds(), PeakRSS: p.Mon.Peak()}
		if lr.Seconds > 0 {
			m.MBps = float64(lr.Bytes) / lr.Seconds / 1e6
		}
		sub.Cells[i].Runs = append(sub.Cells[i].Runs, m)
		fe := ""
		if lr.FirstErr != "" {
			fe = ", first error: " + lr.FirstErr
		}
		env.Logf("http: %s x%d: %.0f MB/s, p99 %.2fs, %d/%d failed, cpu %.2f%s", s.name, c, m.MBps, m.P99, m.Failures, m.Fetches, m.CPU, fe)
	}
	return nil
}

func load(ctx context.Context, env *harness.Env, o LoadOptions) (LoadResult, error) {
	var lr LoadResult
	c, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := env.LoadCommand(c, env.Self, "load", "http", "--url", o.URL, "--size", strconv.FormatInt(o.Size, 10),
		"--clients", strconv.Itoa(o.Clients), "--rounds", strconv.Itoa(o.Rounds))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return lr, fmt.Errorf("http load: %v: %s", err, stderr.String())
	}
	if err := json.Unmarshal(out, &lr); err != nil {
		return lr, fmt.Errorf("http load output %q: %w", out, err)
	}
	// Failed fetches are a result (counted in the report), not an error.
	return lr, nil
}

// makeFile writes size random bytes (incompressible, like an initrd) and
// returns their sha256.
func makeFile(dir string, size int64) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.OpenFile(filepath.Join(dir, fileName), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.Reader, size); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
