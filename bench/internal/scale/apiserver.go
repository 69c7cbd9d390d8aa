package scale

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"anvil.dev/anvil/deploy"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
)

// Users the two anvil processes authenticate as, so that the API server's
// audit log says which process made each request (rest_client_requests_total
// has no resource label).
const (
	userControllers = "anvil-controllers"
	userNetboot     = "anvil-netboot"
)

// apiServer is test/envtest's control plane (the same binaries, CRDs and
// bootstrap-token authentication) plus an audit log of the anvil users'
// requests (metadata only) and a kubeconfig per user.
type apiServer struct {
	env        *crenvtest.Environment
	cfg        *rest.Config
	auditLog   string
	kubeconfig map[string]string // user -> path
}

var quietOnce sync.Once

// startAPIServer starts it; audit adds the audit log, with each request's
// body where bodies is set (level Request instead of Metadata: what each
// write changed, at the cost of a much larger log).
func startAPIServer(dir string, audit, bodies bool) (*apiServer, error) {
	// envtest logs through controller-runtime's logger, which nothing set.
	quietOnce.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	root, err := need.RepoRoot()
	if err != nil {
		return nil, err
	}
	crds, err := deploy.CRDs()
	if err != nil {
		return nil, err
	}
	a := &apiServer{kubeconfig: map[string]string{}}
	a.env = &crenvtest.Environment{BinaryAssetsDirectory: filepath.Join(root, "bin"), CRDs: crds, ErrorIfCRDPathMissing: true,
		Scheme: envtest.Scheme(), ControlPlaneStartTimeout: 90 * time.Second}
	api := a.env.ControlPlane.GetAPIServer()
	api.StartTimeout = 90 * time.Second
	args := api.Configure().Set("enable-bootstrap-token-auth", "true")
	if audit {
		policy := filepath.Join(dir, "audit-policy.yaml")
		level := "Metadata"
		if bodies {
			level = "Request"
		}
		// Metadata of the anvil processes' requests, once each (at
		// ResponseComplete; watches when they end); nothing else.
		if err := os.WriteFile(policy, []byte(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted", "Panic"]
rules:
  - level: `+level+`
    users: ["`+userControllers+`", "`+userNetboot+`"]
  - level: None
`), 0o644); err != nil {
			return nil, err
		}
		a.auditLog = filepath.Join(dir, "audit.log")
		args.Set("audit-policy-file", policy).Set("audit-log-path", a.auditLog).Set("audit-log-format", "json").
			Set("audit-log-mode", "batch").Set("audit-log-batch-max-wait", "1s").
			// One file: the API server's log rotation defaults to 100 MB,
			// which a 5,000-Machine scale-up passes, and auditCounts
			// reads this file only.
			Set("audit-log-maxsize", "1000000")
	}
	if a.cfg, err = a.env.Start(); err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	for _, u := range []string{userControllers, userNetboot} {
		au, err := a.env.ControlPlane.AddUser(crenvtest.User{Name: u, Groups: []string{"system:masters"}}, a.cfg)
		if err != nil {
			_ = a.env.Stop()
			return nil, err
		}
		b, err := au.KubeConfig()
		if err != nil {
			_ = a.env.Stop()
			return nil, err
		}
		p := filepath.Join(dir, "kubeconfig-"+u)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			_ = a.env.Stop()
			return nil, err
		}
		a.kubeconfig[u] = p
	}
	return a, nil
}

func (a *apiServer) stop() { _ = a.env.Stop() }

// auditCounts counts the audited requests received in [from, to), by user
// and by "verb resource[/subresource]", and the most requests one user made
// in one second.
func (a *apiServer) auditCounts(from, to time.Time) (audit, error) {
	out := map[string]map[string]float64{}
	perSec := map[string]map[int64]float64{}
	peak := map[string]float64{}
	lat := map[string][]float64{} // controllers' requests only
	res := audit{counts: out, peak: peak, latency: map[string][2]float64{}, seconds: map[string]float64{}}
	if a.auditLog == "" {
		return res, nil
	}
	f, err := os.Open(a.auditLog)
	if err != nil {
		return res, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	var ev struct {
		User struct {
			Username string `json:"username"`
		} `json:"user"`
		Verb      string `json:"verb"`
		ObjectRef *struct {
			Resource    string `json:"resource"`
			Subresource string `json:"subresource"`
		} `json:"objectRef"`
		Received time.Time `json:"requestReceivedTimestamp"`
		Done     time.Time `json:"stageTimestamp"`
	}
	for sc.Scan() {
		ev.ObjectRef = nil
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue
		}
		if ev.Received.Before(from) || !ev.Received.Before(to) {
			continue
		}
		key := ev.Verb
		if r := ev.ObjectRef; r != nil {
			key += " " + r.Resource
			if r.Subresource != "" {
				key += "/" + r.Subresource
			}
		}
		m := out[ev.User.Username]
		if m == nil {
			m = map[string]float64{}
			out[ev.User.Username] = m
		}
		m[key]++
		ps := perSec[ev.User.Username]
		if ps == nil {
			ps = map[int64]float64{}
			perSec[ev.User.Username] = ps
		}
		sec := ev.Received.Unix()
		ps[sec]++
		peak[ev.User.Username] = max(peak[ev.User.Username], ps[sec])
		if ev.User.Username == userControllers && ev.Verb != "watch" {
			d := ev.Done.Sub(ev.Received).Seconds()
			lat[key] = append(lat[key], d*1000)
			res.seconds[key] += d
		}
	}
	for k, v := range lat {
		sort.Float64s(v)
		q := func(p float64) float64 { return v[min(len(v)-1, int(p*float64(len(v))))] }
		res.latency[k] = [2]float64{q(0.5), q(0.99)}
	}
	return res, sc.Err()
}

// audit is what the audit log says about one window.
type audit struct {
	counts  map[string]map[string]float64 // user -> "verb resource" -> requests
	peak    map[string]float64            // user -> most requests in one second
	latency map[string][2]float64         // controllers' "verb resource" -> p50, p99 ms
	seconds map[string]float64            // controllers' "verb resource" -> summed server time
}
