package storm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// iPXE and Ignition identify themselves like this; Anvil does not look at
// it, the access log shows it.
const (
	ipxeUserAgent     = "iPXE/1.21.1+ (anvil-bench storm)"
	ignitionUserAgent = "Ignition/2.26.0"
	ignitionAccept    = "application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1"
)

// newHTTPClient is one host's HTTP client: connections from its leased
// address, kept alive between requests (iPXE pools its HTTP connection;
// Ignition uses Go's default transport).
func newHTTPClient(from netip.Addr, timeout time.Duration) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: from.AsSlice()}, Timeout: 30 * time.Second}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:           d.DialContext,
			DisableCompression:    true,
			MaxIdleConnsPerHost:   1,
			IdleConnTimeout:       2 * time.Minute,
			ResponseHeaderTimeout: 2 * time.Minute,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// errHTTP is a failed request with a short, groupable reason.
type errHTTP struct{ what, reason string }

func (e *errHTTP) Error() string { return e.what + ": " + e.reason }

// get fetches u as iPXE does: one try, anything but 200 fails the boot.
// It returns the body when keep is set, else only counts it.
func get(ctx context.Context, c *http.Client, what, u string, keep bool) ([]byte, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, &errHTTP{what, "bad URL"}
	}
	req.Header.Set("User-Agent", ipxeUserAgent)
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, &errHTTP{what, netReason(err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return nil, 0, &errHTTP{what, "HTTP " + strconv.Itoa(resp.StatusCode)}
	}
	var buf bytes.Buffer
	var n int64
	if keep {
		n, err = io.Copy(&buf, io.LimitReader(resp.Body, 1<<20))
	} else {
		n, err = io.Copy(io.Discard, resp.Body)
	}
	if err != nil {
		return nil, n, &errHTTP{what, "body: " + netReason(err)}
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return nil, n, &errHTTP{what, fmt.Sprintf("short body: %d of %d bytes", n, resp.ContentLength)}
	}
	return buf.Bytes(), n, nil
}

// netReason turns a transport error into a short reason that groups well.
func netReason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection reset"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// ipxeScript is what the storm needs of an iPXE script.
type ipxeScript struct {
	Kernel  string
	Args    []string
	Initrds []string
	Echo    []string
	Exit    bool
	// Chain and Sleep: "sleep N" then "chain URL" (Anvil's answer for a
	// Host it does not know or accept yet: wait and ask again).
	Chain string
	Sleep time.Duration
}

// parseScript reads the commands Anvil's scripts use (httpboot.BootScript,
// ExitScript, UnknownHostScript and delivery's withheld script) and
// resolves URLs against the script's own URL, as iPXE does.
func parseScript(b []byte, base *url.URL) (ipxeScript, error) {
	var s ipxeScript
	sc := bufio.NewScanner(bytes.NewReader(b))
	first := true
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if first {
			first = false
			if line != "#!ipxe" {
				return s, errors.New("not an iPXE script (no #!ipxe)")
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		resolve := func(u string) (string, error) {
			ref, err := url.Parse(u)
			if err != nil {
				return "", fmt.Errorf("bad URL %q", u)
			}
			return base.ResolveReference(ref).String(), nil
		}
		var err error
		switch f[0] {
		case "echo":
			s.Echo = append(s.Echo, strings.Join(f[1:], " "))
		case "kernel":
			if len(f) < 2 {
				return s, errors.New("kernel without URL")
			}
			if s.Kernel, err = resolve(f[1]); err != nil {
				return s, err
			}
			s.Args = f[2:]
		case "initrd":
			args := f[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "--") {
				if args[0] == "--name" && len(args) > 1 {
					args = args[1:]
				}
				args = args[1:]
			}
			if len(args) == 0 {
				return s, errors.New("initrd without URL")
			}
			u, err := resolve(args[0])
			if err != nil {
				return s, err
			}
			s.Initrds = append(s.Initrds, u)
		case "sleep":
			if len(f) > 1 {
				n, _ := strconv.Atoi(f[1])
				s.Sleep = time.Duration(n) * time.Second
			}
		case "chain":
			for _, a := range f[1:] {
				if !strings.HasPrefix(a, "--") {
					if s.Chain, err = resolve(a); err != nil {
						return s, err
					}
					break
				}
			}
		case "exit":
			s.Exit = true
		case "boot":
		default:
			return s, fmt.Errorf("unexpected command %q", f[0])
		}
	}
	return s, sc.Err()
}

// configURL is the ignition.config.url kernel argument.
func (s ipxeScript) configURL() string {
	for _, a := range s.Args {
		if v, ok := strings.CutPrefix(a, "ignition.config.url="); ok {
			return v
		}
	}
	return ""
}

// fetchConfig is Ignition's fetch of ignition.config.url (internal/resource
// of ignition v2.26): retry 5xx and connection errors with a backoff from
// 200 ms doubling to 5 s; any other answer but 200 fails the boot (a 403 is
// final). Ignition itself retries without end; the storm gives up at
// ctx's deadline.
func fetchConfig(ctx context.Context, c *http.Client, u string, retries *int) ([]byte, error) {
	backoff := 200 * time.Millisecond
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, &errHTTP{"config", "bad URL"}
		}
		req.Header.Set("User-Agent", ignitionUserAgent)
		req.Header.Set("Accept", ignitionAccept)
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := c.Do(req)
		if err == nil {
			if resp.StatusCode < 500 {
				body, rerr := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
				resp.Body.Close()
				switch {
				case resp.StatusCode != http.StatusOK:
					return nil, &errHTTP{"config", "HTTP " + strconv.Itoa(resp.StatusCode) + " (Ignition does not retry it)"}
				case rerr != nil:
					err = rerr // retried, like a connection error
				default:
					if err := checkIgnition(body); err != nil {
						return nil, &errHTTP{"config", err.Error()}
					}
					return body, nil
				}
			} else {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		if ctx.Err() != nil {
			return nil, &errHTTP{"config", "gave up retrying: " + lastReason(err, resp)}
		}
		*retries++
		select {
		case <-ctx.Done():
			return nil, &errHTTP{"config", "gave up retrying: " + lastReason(err, resp)}
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func lastReason(err error, resp *http.Response) string {
	if err != nil {
		return netReason(err)
	}
	if resp != nil {
		return "HTTP " + strconv.Itoa(resp.StatusCode)
	}
	return "unknown"
}

// checkIgnition makes sure the body is an Ignition config (3.x).
func checkIgnition(b []byte) error {
	var c struct {
		Ignition struct {
			Version string `json:"version"`
		} `json:"ignition"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return errors.New("body is not JSON")
	}
	if !strings.HasPrefix(c.Ignition.Version, "3.") {
		return fmt.Errorf("not an Ignition 3 config (version %q)", c.Ignition.Version)
	}
	return nil
}
