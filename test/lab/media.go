package lab

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"anvil.dev/anvil/test/redfishsim"
)

// Virtual media. A HostOptions.VirtualMedia VM has an empty SATA CD drive
// (device cdDevice) and a QMP socket. Its Redfish BMC's InsertMedia
// downloads the image as a BMC does, from the lab's namespace, into
// <host dir>/media.iso, and puts it into a running VM's drive with QMP
// blockdev-change-medium; a VM started later gets the file in its drive
// from the power script. EjectMedia removes the file and ejects a running
// VM's medium. The image URL (it carries a one-time token) is never logged.

const (
	cdDrive   = "cd0"    // the -drive id (the power script adds the drive)
	cdDevice  = "cd0dev" // the ide-cd qdev id QMP commands name
	mediaFile = "media.iso"
	qmpSocket = "qmp.sock"
	// maxMediaBytes bounds a download: Anvil's ISOs are a few MiB.
	maxMediaBytes = 256 << 20
)

// MediaRecord is what the lab's BMC did with a virtual media event.
type MediaRecord struct {
	Host string
	// Inserted: an InsertMedia (else an eject).
	Inserted bool
	// URL of the inserted image; it holds the boot's token: tests use it
	// (a GET after the boot must be refused) and must not log it.
	URL string
	// Bytes downloaded; Attached says whether a running VM got it by QMP
	// (false: the VM was off and gets the file at its next start).
	Bytes    int64
	Attached bool
	// Err is why the download or QMP failed ("" when it did not).
	Err string
}

// mediaLog keeps the records per lab.
type mediaLog struct {
	mu   sync.Mutex
	recs []MediaRecord
}

// MediaRecords returns the virtual media events the lab's BMCs handled,
// oldest first.
func (l *Lab) MediaRecords() []MediaRecord {
	l.media.mu.Lock()
	defer l.media.mu.Unlock()
	return append([]MediaRecord(nil), l.media.recs...)
}

// onMedia is a VirtualMedia host's OnMedia hook. It runs inside the
// BMC's InsertMedia or EjectMedia request, so the image is on disk before
// the BMC answers (and before Anvil's power-on that follows it).
func (l *Lab) onMedia(v *vm, ev redfishsim.MediaEvent) {
	if !v.VirtualMedia || !isCD(ev.MediaTypes) {
		return
	}
	rec := MediaRecord{Host: v.Name, Inserted: ev.Image != "", URL: ev.Image}
	err := l.changeMedia(v, ev.Image, &rec)
	if err != nil {
		rec.Err = err.Error()
		l.log.Error(err, "virtual media", "host", v.Name, "insert", rec.Inserted)
	} else {
		l.log.Info("virtual media", "host", v.Name, "insert", rec.Inserted, "bytes", rec.Bytes, "attachedToRunningVM", rec.Attached)
	}
	l.media.mu.Lock()
	l.media.recs = append(l.media.recs, rec)
	l.media.mu.Unlock()
}

func isCD(types []string) bool {
	for _, t := range types {
		if t == "CD" || t == "DVD" {
			return true
		}
	}
	return false
}

// changeMedia downloads image (empty: eject) and, under the host's power
// lock, swaps <host dir>/media.iso and tells a running VM.
func (l *Lab) changeMedia(v *vm, image string, rec *MediaRecord) error {
	p := filepath.Join(v.dir, mediaFile)
	tmp := p + ".part"
	if image != "" {
		// Anvil records the token before it has the BMC insert the URL, but
		// the boot server (another process) learns it from its cache a
		// moment later: retry for a while, as a BMC does.
		var err error
		for i := 0; i < 20; i++ {
			if rec.Bytes, err = l.download(image, tmp); err == nil {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			_ = os.Remove(tmp)
			return err
		}
	}
	f := waitLock(filepath.Join(v.dir, "lock"), time.Minute)
	if f == nil {
		return fmt.Errorf("lab: host %s: its power lock is held for a minute", v.Name)
	}
	defer f.Close()
	if image == "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	} else if err := os.Rename(tmp, p); err != nil {
		return err
	}
	if !v.running() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := dialQMP(ctx, filepath.Join(v.dir, qmpSocket))
	if err != nil {
		return fmt.Errorf("lab: host %s: %w", v.Name, err)
	}
	defer q.Close()
	if image == "" {
		err = q.Execute("eject", map[string]any{"id": cdDevice, "force": true})
	} else {
		err = q.Execute("blockdev-change-medium", map[string]any{"id": cdDevice, "filename": p, "format": "raw", "read-only-mode": "read-only"})
	}
	if err != nil {
		return fmt.Errorf("lab: host %s: %w", v.Name, err)
	}
	rec.Attached = true
	return nil
}

// HTTPClient is an HTTP client whose connections start inside the lab's
// namespace (where the boot server and the VMs are). CloseIdleConnections
// when done.
func (l *Lab) HTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	var tc *tls.Config
	if len(l.o.BootCA) > 0 {
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool()
		}
		roots.AppendCertsFromPEM(l.o.BootCA)
		tc = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: tc,
		// The socket is made on a thread in the namespace; it stays there.
		DialContext: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
			err = l.ns.Do(func() error { c, err = dialer.DialContext(ctx, network, addr); return err })
			return c, err
		},
	}}
}

// download GETs url from inside the lab's namespace (where the boot
// server is) into dst, as a BMC fetches an image. Errors leave the URL out:
// it carries a token.
func (l *Lab) download(image, dst string) (int64, error) {
	c := l.HTTPClient()
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, image, nil)
	if err != nil {
		return 0, errors.New("lab: virtual media: the image URL does not parse")
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the url.Error would name the URL
		}
		return 0, fmt.Errorf("lab: virtual media: fetching the image from %s: %w", req.URL.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("lab: virtual media: the image server %s answered %s", req.URL.Host, resp.Status)
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, io.LimitReader(resp.Body, maxMediaBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxMediaBytes {
		err = fmt.Errorf("lab: virtual media: the image is larger than %d MiB", maxMediaBytes>>20)
	}
	return n, err
}

// qmp is a QEMU Machine Protocol connection: JSON lines over a unix
// socket; the greeting, qmp_capabilities, then commands. Asynchronous
// events (lines with "event") are skipped.
type qmp struct {
	c net.Conn
	r *bufio.Reader
}

func dialQMP(ctx context.Context, path string) (*qmp, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("QMP %s: %w", path, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	q := &qmp{c: c, r: bufio.NewReader(c)}
	var greeting struct {
		QMP json.RawMessage `json:"QMP"`
	}
	if err := q.read(&greeting); err != nil || greeting.QMP == nil {
		c.Close()
		return nil, fmt.Errorf("QMP %s: no greeting (%v)", path, err)
	}
	if err := q.Execute("qmp_capabilities", nil); err != nil {
		c.Close()
		return nil, err
	}
	return q, nil
}

func (q *qmp) read(v any) error {
	line, err := q.r.ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}

// Execute runs cmd and returns QMP's error, if any.
func (q *qmp) Execute(cmd string, args map[string]any) error {
	req := map[string]any{"execute": cmd}
	if args != nil {
		req["arguments"] = args
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := q.c.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("QMP %s: %w", cmd, err)
	}
	for range 1000 { // events may come first
		var resp struct {
			Return json.RawMessage `json:"return"`
			Event  string          `json:"event"`
			Error  *struct {
				Class string `json:"class"`
				Desc  string `json:"desc"`
			} `json:"error"`
		}
		if err := q.read(&resp); err != nil {
			return fmt.Errorf("QMP %s: %w", cmd, err)
		}
		switch {
		case resp.Error != nil:
			return fmt.Errorf("QMP %s: %s: %s", cmd, resp.Error.Class, resp.Error.Desc)
		case resp.Return != nil:
			return nil
		}
	}
	return fmt.Errorf("QMP %s: no answer among a thousand events", cmd)
}

func (q *qmp) Close() error { return q.c.Close() }
