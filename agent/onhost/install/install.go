package install

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/onhost/facts"
	"anvil.dev/anvil/internal/backoff"
)

// Options configure Run.
type Options struct {
	// PlanURL is the value of agent.InstallArg. It carries the boot
	// credential: never logged.
	PlanURL string
	// HTTPClient makes the plan and result requests (default: 30s timeout,
	// no proxy). The image download uses a copy without the overall
	// timeout.
	HTTPClient *http.Client
	// Root prefixes /proc and /sys for the facts (default "/").
	Root string
	// DevDir holds the device nodes (default "/dev"). <DevDir>/<device>
	// may be a regular file (tests): then no partition table is re-read
	// and the SeedWriter gets no partition node.
	DevDir string
	// AgentVersion goes into the request.
	AgentVersion string
	// SeedWriter writes the seed into the root filesystem (default
	// MountSeedWriter(DefaultMountDir)).
	SeedWriter SeedWriter
	// Attempts per request (default 8) and the delays between them
	// (default 1s doubling to 30s, jittered).
	Attempts int
	Retry    backoff.Backoff
	// PartitionWait bounds the wait for the root partition's device node
	// after the table is re-read (default 15s).
	PartitionWait time.Duration
	// DownloadIdle ends a download that delivers no byte for that long
	// (default 2m): the download has no overall timeout.
	DownloadIdle time.Duration
	Logger       logr.Logger
}

// DefaultMountDir is where MountSeedWriter mounts the root filesystem.
const DefaultMountDir = "/run/anvil-install/root"

const (
	mib         = 1 << 20
	writeBuffer = 8 * mib // large writes: a disk takes them at full speed
)

// Error is a failed install; Reason is what was reported.
type Error struct {
	Reason agent.InstallFailure
	Err    error
}

func (e *Error) Error() string { return string(e.Reason) + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func fail(reason agent.InstallFailure, format string, args ...any) *Error {
	return &Error{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// ReportError: the result could not be posted (the install itself may
// have succeeded: see the returned InstallResult).
type ReportError struct{ Err error }

func (e *ReportError) Error() string { return "reporting the install result: " + e.Err.Error() }
func (e *ReportError) Unwrap() error { return e.Err }

type installer struct {
	o   Options
	log logr.Logger
}

// Run installs: plan, image, seed, result. It returns the result it
// reported (or tried to), and an error joining an *Error (the install
// failed) and a *ReportError (the result was not delivered). A result
// with Outcome InstallSucceeded means the disk holds the verified image
// and the seed; the caller then reboots.
func Run(ctx context.Context, o Options) (agent.InstallResult, error) {
	if err := o.defaults(); err != nil {
		return agent.InstallResult{}, err
	}
	resultURL, err := agent.InstallResultURL(o.PlanURL)
	if err != nil {
		return agent.InstallResult{}, errors.New("install: the plan URL does not parse")
	}
	i := &installer{o: o, log: o.Logger.WithValues("server", urlHost(o.PlanURL))}
	res := agent.InstallResult{Outcome: agent.InstallSucceeded}
	ierr := i.install(ctx, &res)
	if ierr != nil {
		res.Outcome, res.Reason = agent.InstallFailed, ierr.Reason
		res.Message = truncate(ierr.Err.Error(), agent.MaxReasonLen)
		res.SHA256 = ""
		i.log.Error(ierr.Err, "install failed", "reason", ierr.Reason)
	}
	// A cancelled install still reports, within a bounded time of its own.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	var rerr error
	if err := i.post(rctx, "install result", resultURL, res, nil); err != nil {
		rerr = &ReportError{Err: err}
		i.log.Error(err, "reporting the install result")
	} else {
		i.log.Info("install result reported", "outcome", res.Outcome, "reason", res.Reason)
	}
	if ierr != nil {
		return res, errors.Join(ierr, rerr)
	}
	return res, rerr
}

func (o *Options) defaults() error {
	u, err := url.Parse(o.PlanURL)
	if o.PlanURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("install: the plan URL (%s=) must be an absolute http(s) URL", agent.InstallArg)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil, ResponseHeaderTimeout: 20 * time.Second}}
	}
	if o.Root == "" {
		o.Root = "/"
	}
	if o.DevDir == "" {
		o.DevDir = "/dev"
	}
	if o.SeedWriter == nil {
		o.SeedWriter = MountSeedWriter(DefaultMountDir)
	}
	if o.Attempts <= 0 {
		o.Attempts = 8
	}
	if o.Retry.Base <= 0 || o.Retry.Cap <= 0 {
		o.Retry = backoff.Backoff{Base: time.Second, Cap: 30 * time.Second, Low: 0.5, High: 1}
	}
	if o.PartitionWait <= 0 {
		o.PartitionWait = 15 * time.Second
	}
	if o.DownloadIdle <= 0 {
		o.DownloadIdle = 2 * time.Minute
	}
	return nil
}

// install does the work, filling res; nothing is written before the plan
// is valid and names a disk this host reported.
func (i *installer) install(ctx context.Context, res *agent.InstallResult) *Error {
	f, err := facts.Collect(facts.Options{Root: i.o.Root, AgentVersion: i.o.AgentVersion})
	if err != nil {
		return fail(agent.InstallNoRootDevice, "reading the host's facts: %v", err)
	}
	res.BootID = f.BootID
	var plan agent.InstallPlan
	err = i.post(ctx, "install plan", i.o.PlanURL, agent.InstallRequest{BootID: f.BootID, AgentVersion: i.o.AgentVersion, Disks: f.Disks}, &plan)
	var refused *RefusedError
	switch {
	case errors.As(err, &refused) && refused.Code == http.StatusUnprocessableEntity:
		return fail(agent.InstallNoRootDevice, "no install plan: %s", refused.Message)
	case err != nil:
		return fail(agent.InstallDownloadFailed, "getting the install plan: %v", err)
	}
	if err := plan.Validate(); err != nil {
		return fail(agent.InstallDownloadFailed, "the server's plan is unusable: %v", err)
	}
	res.Device = plan.Device
	var disk *agent.Disk
	var names []string
	for k := range f.Disks {
		names = append(names, f.Disks[k].Name)
		if f.Disks[k].Name == plan.Device {
			disk = &f.Disks[k]
		}
	}
	if disk == nil {
		return fail(agent.InstallNoRootDevice, "the plan names disk %q, which this host did not report (it has %s)", plan.Device, strings.Join(names, ", "))
	}
	i.log.Info("install plan", "device", plan.Device, "diskBytes", disk.SizeBytes, "image", redactURL(plan.Image.URL), "sha256", plan.Image.SHA256, "seedHost", urlHost(plan.SeedURL))

	path := filepath.Join(i.o.DevDir, plan.Device)
	block, err := isBlockDevice(path)
	if err != nil {
		return fail(agent.InstallWriteFailed, "%v", err)
	}
	n, werr := i.writeImage(ctx, path, block, plan.Image, disk.SizeBytes)
	res.BytesWritten = n
	if werr != nil {
		return werr
	}
	res.SHA256 = plan.Image.SHA256
	if err := i.seed(ctx, path, block, plan); err != nil {
		if zerr := zeroEnds(path); zerr != nil {
			err.Err = errors.Join(err.Err, fmt.Errorf("zeroing the disk's first and last MiB: %w", zerr))
		}
		return err
	}
	return nil
}

func isBlockDevice(path string) (bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return false, fmt.Errorf("the plan's device: %w", err)
	}
	switch {
	case st.Mode()&os.ModeDevice != 0 && st.Mode()&os.ModeCharDevice == 0:
		return true, nil
	case st.Mode().IsRegular():
		return false, nil
	}
	return false, fmt.Errorf("%s is neither a block device nor a regular file", path)
}

// sideErr remembers an error of one side of a copy, so a failed copy can
// be blamed on the download or on the disk.
type sideErr struct {
	r      io.Reader
	w      io.Writer
	onRead func()
	err    error
}

func (s *sideErr) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 && s.onRead != nil {
		s.onRead()
	}
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

func (s *sideErr) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

// writeImage streams the image onto path, hashing it, and syncs. Any
// failure once a byte may have reached the disk zeroes the disk's first
// and last MiB (the partition tables), so that it cannot boot a partial
// or corrupt image.
func (i *installer) writeImage(ctx context.Context, path string, block bool, img agent.InstallImage, diskSize int64) (int64, *Error) {
	flags := os.O_WRONLY | unix.O_CLOEXEC
	if block {
		flags |= unix.O_EXCL // refused while a partition is mounted
	}
	dev, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return 0, fail(agent.InstallWriteFailed, "opening %s: %v", path, err)
	}
	defer dev.Close()
	// A stalled download is cancelled: every read pushes the deadline out.
	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errIdle := fmt.Errorf("no data for %v", i.o.DownloadIdle)
	idle := time.AfterFunc(i.o.DownloadIdle, func() { cancel(errIdle) })
	defer idle.Stop()
	req, err := http.NewRequestWithContext(dctx, http.MethodGet, img.URL, nil)
	if err != nil {
		return 0, fail(agent.InstallDownloadFailed, "image URL %s: %v", redactURL(img.URL), err)
	}
	req.Header.Set("User-Agent", "anvil-agent/"+i.o.AgentVersion)
	dl := *i.o.HTTPClient
	dl.Timeout = 0 // an image takes as long as it takes; ctx bounds it
	resp, err := dl.Do(req)
	if err != nil {
		return 0, fail(agent.InstallDownloadFailed, "downloading the image: %v", redactErr(err, img.URL))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fail(agent.InstallDownloadFailed, "downloading the image %s: HTTP %d", redactURL(img.URL), resp.StatusCode)
	}
	if resp.ContentLength > 0 && diskSize > 0 && resp.ContentLength > diskSize {
		return 0, fail(agent.InstallWriteFailed, "the image is %d bytes, disk %s only %d", resp.ContentLength, filepath.Base(path), diskSize)
	}
	start := time.Now()
	i.log.Info("writing the image", "device", path, "imageBytes", resp.ContentLength)
	h := sha256.New()
	src := &sideErr{r: resp.Body, onRead: func() { idle.Reset(i.o.DownloadIdle) }}
	dst := &sideErr{w: dev}
	bw := bufio.NewWriterSize(dst, writeBuffer)
	n, err := io.CopyBuffer(io.MultiWriter(bw, h), src, make([]byte, mib))
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		if err = dev.Sync(); err != nil {
			dst.err = err
		}
	}
	var ferr *Error
	switch {
	case err != nil && dst.err != nil:
		ferr = fail(agent.InstallWriteFailed, "writing %s after %d bytes: %v", path, n, dst.err)
	case err != nil:
		if c := context.Cause(dctx); errors.Is(c, errIdle) {
			err = c
		}
		ferr = fail(agent.InstallDownloadFailed, "downloading the image after %d bytes: %v", n, redactErr(err, img.URL))
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		ferr = fail(agent.InstallDownloadFailed, "the image download ended after %d of %d bytes", n, resp.ContentLength)
	default:
		if sum := hex.EncodeToString(h.Sum(nil)); sum != img.SHA256 {
			ferr = fail(agent.InstallChecksumMismatch, "the image's sha256 is %s, the plan says %s (%d bytes written)", sum, img.SHA256, n)
		}
	}
	if ferr != nil {
		dev.Close()
		if zerr := zeroEnds(path); zerr != nil {
			ferr.Err = errors.Join(ferr.Err, fmt.Errorf("zeroing the disk's first and last MiB: %w", zerr))
		}
		return n, ferr
	}
	took := time.Since(start)
	i.log.Info("image written and verified", "device", path, "bytes", n, "took", took.Round(time.Millisecond).String(),
		"MiBps", fmt.Sprintf("%.1f", float64(n)/mib/max(took.Seconds(), 0.001)))
	return n, nil
}

// zeroEnds zeroes the first and last MiB of path (all of it when smaller
// than 2 MiB) and syncs.
func zeroEnds(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	zero := make([]byte, mib)
	for _, off := range []int64{0, max(size-mib, 0)} {
		n := min(int64(mib), size-off)
		if n <= 0 {
			continue
		}
		if _, err := f.WriteAt(zero[:n], off); err != nil {
			return err
		}
	}
	return f.Sync()
}

// seed finds the root partition in the written image and writes the
// NoCloud seed into it.
func (i *installer) seed(ctx context.Context, path string, block bool, plan agent.InstallPlan) *Error {
	if block {
		if err := rereadPartitions(ctx, path); err != nil {
			return fail(agent.InstallSeedFailed, "re-reading the partition table of %s: %v", path, err)
		}
	}
	r, err := os.Open(path)
	if err != nil {
		return fail(agent.InstallSeedFailed, "%v", err)
	}
	gp, err := FindGPTPartition(r, agent.InstallRootPartLabel)
	r.Close()
	if err != nil {
		return fail(agent.InstallSeedFailed, "the image's root partition: %v", err)
	}
	p := Partition{Disk: path, GPTPartition: gp}
	if block {
		p.Path = filepath.Join(i.o.DevDir, partitionName(plan.Device, gp.Number))
		if err := waitBlockDevice(ctx, p.Path, i.o.PartitionWait); err != nil {
			return fail(agent.InstallSeedFailed, "the root partition %s (%s) did not appear: %v", p.Path, agent.InstallRootPartLabel, err)
		}
	}
	if err := i.o.SeedWriter(ctx, p, agent.InstallSeedFile, SeedConfig(plan.SeedURL)); err != nil {
		return fail(agent.InstallSeedFailed, "writing %s on partition %d (%s): %v", agent.InstallSeedFile, gp.Number, agent.InstallRootPartLabel, err)
	}
	i.log.Info("seed written", "partition", gp.Number, "file", agent.InstallSeedFile, "seedHost", urlHost(plan.SeedURL))
	return nil
}

// rereadPartitions asks the kernel to read the new table (BLKRRPART) from
// a non-exclusive open: an exclusive holder would make it busy.
func rereadPartitions(ctx context.Context, path string) error {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		var f *os.File
		if f, err = os.OpenFile(path, os.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return err
		}
		err = unix.IoctlSetInt(int(f.Fd()), unix.BLKRRPART, 0)
		f.Close()
		if !errors.Is(err, unix.EBUSY) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return err
}

// waitBlockDevice waits for devtmpfs to show the partition's node.
func waitBlockDevice(ctx context.Context, path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := isBlockDevice(path)
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("not a block device")
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
