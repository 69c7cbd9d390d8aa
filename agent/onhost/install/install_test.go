package install

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/internal/backoff"
	"anvil.dev/anvil/test/disktest"
)

const (
	testBootID = "0b5c7e1a-54d2-4f3e-9d8c-7a6b5c4d3e2f"
	planCred   = "plan-credential-c2VjcmV0LXBsYW4"
	seedSecret = "seed-credential-c2VjcmV0LXNlZWQ"
)

// planServer speaks the install protocol: the plan at
// /config/<mac>/install?cred=..., its result at .../install/result, and
// the image at /images/disk.img.
type planServer struct {
	t   *testing.T
	srv *httptest.Server

	mu sync.Mutex
	// plan answers; planFails answers 503 that many times first; refuse
	// answers 422 with that message instead.
	plan       agent.InstallPlan
	planFails  int
	refuse     string
	resultFail int
	image      []byte
	// truncateAt > 0 sends that many bytes of a full Content-Length, then
	// cuts the connection; with stall it holds the connection open instead.
	truncateAt int
	stall      bool

	requests []agent.InstallRequest
	results  []agent.InstallResult
	planHits int
}

func newPlanServer(t *testing.T, image []byte) *planServer {
	ps := &planServer{t: t, image: image}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /config/52-54-00-aa-bb-01/install", ps.servePlan)
	mux.HandleFunc("POST /config/52-54-00-aa-bb-01/install/result", ps.serveResult)
	mux.HandleFunc("GET /images/disk.img", ps.serveImage)
	ps.srv = httptest.NewServer(mux)
	t.Cleanup(ps.srv.Close)
	sum := sha256.Sum256(image)
	ps.plan = agent.InstallPlan{
		Device:  "vda",
		Image:   agent.InstallImage{URL: ps.srv.URL + "/images/disk.img", SHA256: hex.EncodeToString(sum[:])},
		SeedURL: ps.srv.URL + "/nocloud/" + seedSecret + "/",
	}
	return ps
}

func (ps *planServer) planURL() string {
	return ps.srv.URL + "/config/52-54-00-aa-bb-01/install?cred=" + planCred
}

func (ps *planServer) credOK(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Query().Get("cred") != planCred {
		http.Error(w, `{"error":"bad credential"}`, http.StatusForbidden)
		return false
	}
	return true
}

func (ps *planServer) servePlan(w http.ResponseWriter, r *http.Request) {
	if !ps.credOK(w, r) {
		return
	}
	var req agent.InstallRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.planHits++
	ps.requests = append(ps.requests, req)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case ps.planFails > 0:
		ps.planFails--
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(agent.ErrorResponse{Error: "busy"})
	case ps.refuse != "":
		w.WriteHeader(http.StatusUnprocessableEntity)
		_ = json.NewEncoder(w).Encode(agent.ErrorResponse{Error: ps.refuse})
	default:
		_ = json.NewEncoder(w).Encode(ps.plan)
	}
}

func (ps *planServer) serveResult(w http.ResponseWriter, r *http.Request) {
	if !ps.credOK(w, r) {
		return
	}
	var res agent.InstallResult
	if err := json.NewDecoder(r.Body).Decode(&res); err != nil || res.Validate() != nil {
		http.Error(w, `{"error":"invalid result"}`, http.StatusBadRequest)
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.resultFail > 0 {
		ps.resultFail--
		http.Error(w, `{"error":"try again"}`, http.StatusInternalServerError)
		return
	}
	ps.results = append(ps.results, res)
	w.WriteHeader(http.StatusNoContent)
}

func (ps *planServer) serveImage(w http.ResponseWriter, r *http.Request) {
	ps.mu.Lock()
	img, cut, stall := ps.image, ps.truncateAt, ps.stall
	ps.mu.Unlock()
	w.Header().Set("Content-Length", strconv.Itoa(len(img)))
	if cut > 0 {
		_, _ = w.Write(img[:cut])
		w.(http.Flusher).Flush()
		if stall {
			<-r.Context().Done() // the client gave up
			return
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	_, _ = w.Write(img)
}

func (ps *planServer) result(t *testing.T) agent.InstallResult {
	t.Helper()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if len(ps.results) != 1 {
		t.Fatalf("the server got %d results, want 1", len(ps.results))
	}
	return ps.results[0]
}

// host is a fake /proc and /sys with one disk, vda, and its "device": a
// regular file under dev/ filled with a non-zero pattern.
type host struct {
	root, devDir, dev string
	size              int64
	log               *bytes.Buffer
	logMu             *sync.Mutex
}

func newHost(t *testing.T, size int64) *host {
	dir := t.TempDir()
	h := &host{root: filepath.Join(dir, "root"), devDir: filepath.Join(dir, "dev"), size: size, log: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	h.dev = filepath.Join(h.devDir, "vda")
	for p, c := range map[string]string{
		"proc/sys/kernel/random/boot_id": testBootID + "\n",
		"sys/block/vda/size":             strconv.FormatInt(size/512, 10) + "\n",
		"sys/block/vda/serial":           "lab-disk-1\n",
		"sys/block/loop0/size":           "2048\n", // not a disk: not reported
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(h.root, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(h.root, p), []byte(c), 0o644))
	}
	must(t, os.MkdirAll(h.devDir, 0o755))
	must(t, os.WriteFile(h.dev, bytes.Repeat([]byte{0xA5}, int(size)), 0o600))
	return h
}

func (h *host) options(ps *planServer) Options {
	return Options{
		PlanURL: ps.planURL(), Root: h.root, DevDir: h.devDir, AgentVersion: "test",
		SeedWriter: func(ctx context.Context, p Partition, rel string, content []byte) error {
			if p.Path != "" {
				return errors.New("a regular file has no partition node")
			}
			return disktest.WriteFile(ctx, p.Disk, p.Offset(), rel, content)
		},
		Attempts: 4, Retry: backoff.Backoff{Base: time.Millisecond, Cap: 5 * time.Millisecond},
		DownloadIdle: time.Second, // a stall; loopback transfers never pause that long
		Logger: funcr.New(func(prefix, args string) {
			h.logMu.Lock()
			defer h.logMu.Unlock()
			h.log.WriteString(prefix + " " + args + "\n")
		}, funcr.Options{}),
	}
}

// checkLogs: the installer logged something, and neither credential.
func (h *host) checkLogs(t *testing.T) {
	t.Helper()
	h.logMu.Lock()
	defer h.logMu.Unlock()
	l := h.log.String()
	if l == "" {
		t.Error("the installer logged nothing")
	}
	for _, s := range []string{planCred, seedSecret} {
		if strings.Contains(l, s) {
			t.Errorf("the log shows a credential (%s):\n%s", s, l)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	must(t, err)
	return b
}

// TestRunInstallsGPTImage writes a real GPT+ext4 image (sgdisk,
// mkfs.ext4) onto a "disk" file and checks it byte for byte, the seed in
// the ext4 partition (debugfs), the request and the reported result.
func TestRunInstallsGPTImage(t *testing.T) {
	img := disktest.Build(t, t.TempDir(), 24<<20, "")
	raw, err := os.ReadFile(img.Path)
	must(t, err)
	h := newHost(t, 64<<20)
	ps := newPlanServer(t, raw)
	ps.planFails = 2  // transient: retried
	ps.resultFail = 1 // transient: retried
	opts := h.options(ps)
	// When the seed is written, the disk holds exactly the image (and the
	// pattern after it); the seed then changes the root filesystem.
	writeSeed, checked := opts.SeedWriter, false
	opts.SeedWriter = func(ctx context.Context, p Partition, rel string, content []byte) error {
		disk, err := os.ReadFile(h.dev)
		must(t, err)
		if !bytes.Equal(disk[:len(raw)], raw) {
			t.Error("the disk does not start with the image")
		}
		if !bytes.Equal(disk[len(raw):], bytes.Repeat([]byte{0xA5}, len(disk)-len(raw))) {
			t.Error("the installer wrote past the image")
		}
		if p.Number != img.RootNumber || p.Offset() != img.RootOffset || p.Size() != img.RootSize {
			t.Errorf("root partition %d at %d (%d bytes), the image has it as %d at %d (%d bytes)", p.Number, p.Offset(), p.Size(), img.RootNumber, img.RootOffset, img.RootSize)
		}
		checked = true
		return writeSeed(ctx, p, rel, content)
	}
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("Run: %v (result %+v)", err, res)
	}
	if !checked {
		t.Fatal("the seed writer was never called")
	}
	got := ps.result(t)
	if got.Outcome != agent.InstallSucceeded || got.Device != "vda" || got.SHA256 != ps.plan.Image.SHA256 ||
		got.BytesWritten != int64(len(raw)) || got.BootID != testBootID {
		t.Errorf("reported %+v", got)
	}
	if res != got {
		t.Errorf("Run returned %+v, reported %+v", res, got)
	}
	// The request: the boot ID and the disks facts.Collect sees.
	ps.mu.Lock()
	req := ps.requests[len(ps.requests)-1]
	hits := ps.planHits
	ps.mu.Unlock()
	if hits != 3 {
		t.Errorf("plan requested %d times, want 3 (two 503s)", hits)
	}
	if req.BootID != testBootID || len(req.Disks) != 1 || req.Disks[0].Name != "vda" || req.Disks[0].SizeBytes != h.size || req.Disks[0].Serial != "lab-disk-1" {
		t.Errorf("install request %+v", req)
	}

	// Outside the root filesystem the disk is still the image.
	disk, err := os.ReadFile(h.dev)
	must(t, err)
	if !bytes.Equal(disk[:img.RootOffset], raw[:img.RootOffset]) || !bytes.Equal(disk[img.RootOffset+img.RootSize:len(raw)], raw[img.RootOffset+img.RootSize:]) {
		t.Error("writing the seed changed the disk outside the root partition")
	}
	seed, ok := disktest.ReadFile(t, h.dev, img.RootOffset, agent.InstallSeedFile)
	if !ok {
		t.Fatalf("no %s in the root filesystem", agent.InstallSeedFile)
	}
	if !bytes.Equal(seed, SeedConfig(ps.plan.SeedURL)) || !bytes.Contains(seed, []byte(`seedfrom: "`+ps.plan.SeedURL+`"`)) {
		t.Errorf("seed file:\n%s", seed)
	}
	if m := disktest.Mode(t, h.dev, img.RootOffset, agent.InstallSeedFile); m != 0o600 {
		t.Errorf("seed file mode %o, want 600", m)
	}
	if marker, _ := disktest.ReadFile(t, h.dev, img.RootOffset, "etc/anvil-image-id"); string(marker) != img.MarkerContent {
		t.Errorf("the image's own files: marker %q, want %q", marker, img.MarkerContent)
	}
	h.checkLogs(t)
}

// checkZeroedEnds: the first and last MiB of the disk are zero, the rest
// untouched (the pattern) or written.
func checkZeroedEnds(t *testing.T, h *host) {
	t.Helper()
	disk, err := os.ReadFile(h.dev)
	must(t, err)
	if !allZero(disk[:mib]) || !allZero(disk[len(disk)-mib:]) {
		t.Errorf("the disk's first or last MiB is not zero (starts % x)", disk[:16])
	}
	if allZero(disk[mib : len(disk)-mib]) {
		t.Error("the whole disk is zero: more than the ends was cleared")
	}
}

func checkUntouched(t *testing.T, h *host) {
	t.Helper()
	disk, err := os.ReadFile(h.dev)
	must(t, err)
	if !bytes.Equal(disk, bytes.Repeat([]byte{0xA5}, int(h.size))) {
		t.Error("the disk was written")
	}
}

func TestRunFailures(t *testing.T) {
	tests := []struct {
		name string
		// setup changes the server (image and plan are set).
		setup      func(ps *planServer)
		wantReason agent.InstallFailure
		wantMsg    string
		// zeroed: the disk's ends are zero; otherwise it is untouched.
		zeroed bool
	}{
		{name: "corrupted image", setup: func(ps *planServer) { ps.image[3<<20] ^= 0xFF },
			wantReason: agent.InstallChecksumMismatch, wantMsg: "sha256", zeroed: true},
		{name: "download cut short", setup: func(ps *planServer) { ps.truncateAt = 5 << 20 },
			wantReason: agent.InstallDownloadFailed, wantMsg: "downloading the image", zeroed: true},
		{name: "download stalls", setup: func(ps *planServer) { ps.truncateAt, ps.stall = 2<<20, true },
			wantReason: agent.InstallDownloadFailed, wantMsg: "no data for 1s", zeroed: true},
		{name: "image missing", setup: func(ps *planServer) { ps.plan.Image.URL = ps.srv.URL + "/images/other.img" },
			wantReason: agent.InstallDownloadFailed, wantMsg: "HTTP 404"},
		{name: "no root device matches the hints (422)", setup: func(ps *planServer) {
			ps.refuse = `rootDeviceHints: no disk with serial "S123" (disks: vda)`
		}, wantReason: agent.InstallNoRootDevice, wantMsg: `no disk with serial "S123"`},
		{name: "plan names a disk the host did not report", setup: func(ps *planServer) { ps.plan.Device = "sdz" },
			wantReason: agent.InstallNoRootDevice, wantMsg: `"sdz", which this host did not report (it has vda)`},
		{name: "plan with a bad checksum field", setup: func(ps *planServer) { ps.plan.Image.SHA256 = strings.ToUpper(ps.plan.Image.SHA256) },
			wantReason: agent.InstallDownloadFailed, wantMsg: "image.sha256"},
		{name: "plan with a device path", setup: func(ps *planServer) { ps.plan.Device = "../vda" },
			wantReason: agent.InstallDownloadFailed, wantMsg: "not a kernel disk name"},
		{name: "server keeps failing", setup: func(ps *planServer) { ps.planFails = 100 },
			wantReason: agent.InstallDownloadFailed, wantMsg: "4 attempts failed"},
		{name: "image larger than the disk", setup: func(ps *planServer) {
			ps.image = append(ps.image, make([]byte, 9<<20)...)
			sum := sha256.Sum256(ps.image)
			ps.plan.Image.SHA256 = hex.EncodeToString(sum[:])
		}, wantReason: agent.InstallWriteFailed, wantMsg: "only 16777216"},
		{name: "image without an anvil-root partition", setup: nil, // replaced below
			wantReason: agent.InstallSeedFailed, wantMsg: `no partition named "anvil-root"`, zeroed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t, 16<<20)
			image := randomBytes(t, 8<<20)
			if tt.setup == nil {
				d := disktest.Build(t, t.TempDir(), 16<<20, "other-root")
				var err error
				image, err = os.ReadFile(d.Path)
				must(t, err)
			}
			ps := newPlanServer(t, image)
			if tt.setup != nil {
				tt.setup(ps)
			}
			res, err := Run(context.Background(), h.options(ps))
			var ierr *Error
			if !errors.As(err, &ierr) || ierr.Reason != tt.wantReason || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Run error %v, want %s naming %q", err, tt.wantReason, tt.wantMsg)
			}
			got := ps.result(t)
			if got.Outcome != agent.InstallFailed || got.Reason != tt.wantReason || !strings.Contains(got.Message, tt.wantMsg) || got.BootID != testBootID {
				t.Errorf("reported %+v", got)
			}
			if res != got {
				t.Errorf("Run returned %+v, reported %+v", res, got)
			}
			if tt.zeroed {
				checkZeroedEnds(t, h)
			} else {
				checkUntouched(t, h)
			}
			h.checkLogs(t)
		})
	}
}

// The result is reported even when the server refuses results for a
// while, and a result that never gets through is Run's error too.
func TestRunReportFails(t *testing.T) {
	h := newHost(t, 16<<20)
	ps := newPlanServer(t, randomBytes(t, 4<<20))
	ps.refuse = "rootDeviceHints: nothing matched"
	ps.resultFail = 100
	_, err := Run(context.Background(), h.options(ps))
	var rerr *ReportError
	var ierr *Error
	if !errors.As(err, &rerr) || !errors.As(err, &ierr) || ierr.Reason != agent.InstallNoRootDevice {
		t.Fatalf("Run error %v, want the install failure and the report failure", err)
	}
	if strings.Contains(err.Error(), planCred) {
		t.Errorf("the error shows the credential: %v", err)
	}
}

func TestRunRefusesBadPlanURL(t *testing.T) {
	for _, u := range []string{"", "/config/x/install", "ftp://h/x", "http:///x"} {
		if _, err := Run(context.Background(), Options{PlanURL: u}); err == nil || !strings.Contains(err.Error(), agent.InstallArg) {
			t.Errorf("plan URL %q: error %v, want one naming %s", u, err, agent.InstallArg)
		}
	}
}

func TestSeedConfig(t *testing.T) {
	got := string(SeedConfig("http://10.0.0.1:8080/nocloud/a&b/"))
	want := "# Written by anvil-agent install: cloud-init's NoCloud seed, fetched over the network.\n" +
		"datasource_list: [ NoCloud ]\ndatasource:\n  NoCloud:\n    seedfrom: \"http://10.0.0.1:8080/nocloud/a&b/\"\n"
	if got != want {
		t.Errorf("SeedConfig:\n%s\nwant:\n%s", got, want)
	}
}

func TestPartitionName(t *testing.T) {
	for disk, want := range map[string]string{"vda": "vda3", "sda": "sda3", "nvme0n1": "nvme0n1p3", "mmcblk0": "mmcblk0p3", "xvdb": "xvdb3"} {
		if got := partitionName(disk, 3); got != want {
			t.Errorf("partitionName(%s, 3) = %s, want %s", disk, got, want)
		}
	}
}

func TestTruncate(t *testing.T) {
	if got := truncate("aé", 2); got != "a" {
		t.Errorf("truncate cut inside a rune: %q", got)
	}
	if got := truncate("abc", 5); got != "abc" {
		t.Errorf("truncate(abc, 5) = %q", got)
	}
}
