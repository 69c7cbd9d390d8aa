package results

import "time"

// Scale is the controller scale benchmark (issue 9, part 5): Hosts behind a
// latency-injecting Redfish emulator, a MachineSet scaled from 0, simulated
// boots, agents and kubelets (test/simhost), `anvil serve` against the
// real kube-apiserver. One entry per size measured.
type Scale struct {
	Started  time.Time  `json:"started"`
	Finished time.Time  `json:"finished"`
	Command  string     `json:"command,omitempty"`
	Load     [2]float64 `json:"load"` // 1-minute load average at start and end
	// Setup is one line: BMC model, simulated delays, anvil flags.
	Setup string      `json:"setup"`
	Sizes []ScaleSize `json:"sizes"`
	Error string      `json:"error,omitempty"`
}

// ScaleSize is one measured size.
type ScaleSize struct {
	Hosts    int `json:"hosts"`
	Machines int `json:"machines"`
	// ServeArgs are the controllers' flags beyond the defaults (none: the
	// defaults, e.g. --kube-api-qps 50).
	ServeArgs []string `json:"serveArgs,omitempty"`
	// RegisterSeconds: Host objects created until all are Available
	// (BMC validated, facts and power read through the emulator).
	RegisterSeconds float64 `json:"registerSeconds"`
	// Completed: every Machine became Ready within the time limit;
	// Ready counts those that did.
	Completed bool `json:"completed"`
	Ready     int  `json:"ready"`
	// ReadySeconds: replicas 0 -> Machines until the last Machine is
	// Ready (or the time limit). ReadyP50/P99 are per Machine, from the
	// scale-up.
	ReadySeconds float64 `json:"readySeconds"`
	// ScaleUpStart is when the replicas patch was sent.
	ScaleUpStart time.Time `json:"scaleUpStart"`
	// CreatedSeconds: until the MachineSet had created every Machine.
	CreatedSeconds float64 `json:"createdSeconds"`
	ReadyP50       float64 `json:"readyP50"`
	ReadyP99       float64 `json:"readyP99"`
	// ScaleUp is the controllers' work from the scale-up to all Ready.
	ScaleUp Work `json:"scaleUp"`
	// Idle is measured over IdleSeconds once every Machine is Ready and
	// SettleSeconds have passed.
	SettleSeconds float64 `json:"settleSeconds"`
	IdleSeconds   float64 `json:"idleSeconds"`
	Idle          Work    `json:"idle"`
	// IdleBMCRequests the emulator answered during the idle window (the
	// Host controller's power polls, every 10 minutes per Host, jittered);
	// IdleAfterRegister is how long after the last Host became Available
	// the window started (polls only run once that is near 8 minutes).
	IdleBMCRequests   int     `json:"idleBMCRequests"`
	IdleAfterRegister float64 `json:"idleAfterRegister"`
	// BMC is what the emulator saw over the whole size (registration too).
	BMC BMCStats `json:"bmc"`
	// Fleet is what the simulated hosts did.
	Fleet FleetStats `json:"fleet"`
	// ConfigDenied counts config requests the HTTP boot server refused,
	// by reason (a refused config fails that boot).
	ConfigDenied map[string]float64 `json:"configDenied,omitempty"`
	Error        string             `json:"error,omitempty"`
	// Runs holds each run's headline figures when the size was measured
	// more than once. The headline fields above (RegisterSeconds,
	// Completed, Ready, ReadySeconds, ReadyP50/P99, the API requests per
	// Machine and the idle CPU) are then the medians over Runs (Completed:
	// every run; Ready: the fewest), and everything else comes from the
	// run whose time to Ready is the median (MedianRun, 0-based).
	Runs      []ScaleRun `json:"runs,omitempty"`
	MedianRun int        `json:"medianRun,omitempty"`
}

// ScaleRun is one run of a size: its headline figures.
type ScaleRun struct {
	Completed            bool    `json:"completed"`
	Ready                int     `json:"ready"`
	RegisterSeconds      float64 `json:"registerSeconds"`
	ReadySeconds         float64 `json:"readySeconds"`
	ReadyP50             float64 `json:"readyP50"`
	ReadyP99             float64 `json:"readyP99"`
	APIPerMachine        float64 `json:"apiPerMachine"`
	NetbootAPIPerMachine float64 `json:"netbootApiPerMachine"`
	IdleSeconds          float64 `json:"idleSeconds"`
	IdleCPU              float64 `json:"idleCPU"`
	IdleNetbootCPU       float64 `json:"idleNetbootCPU"`
	Error                string  `json:"error,omitempty"`
}

// Headline is the size's own headline figures, as one run.
func (z *ScaleSize) Headline() ScaleRun {
	return ScaleRun{Completed: z.Completed, Ready: z.Ready, RegisterSeconds: z.RegisterSeconds, ReadySeconds: z.ReadySeconds,
		ReadyP50: z.ReadyP50, ReadyP99: z.ReadyP99, APIPerMachine: z.ScaleUp.APIPerMachine, NetbootAPIPerMachine: z.ScaleUp.NetbootAPIPerMachine,
		IdleSeconds: z.IdleSeconds, IdleCPU: z.Idle.CPU, IdleNetbootCPU: z.Idle.NetbootCPU, Error: z.Error}
}

// Work is what the anvil processes did in one window.
type Work struct {
	Seconds float64 `json:"seconds"`
	// Reconciles by controller, ReconcilesPerSecond all together;
	// ReconcileP99 (seconds) by controller, from
	// controller_runtime_reconcile_time_seconds; ReconcileErrors by
	// controller.
	Reconciles          map[string]float64 `json:"reconciles,omitempty"`
	ReconcilesPerSecond float64            `json:"reconcilesPerSecond"`
	ReconcileP99        map[string]float64 `json:"reconcileP99,omitempty"`
	ReconcileErrors     map[string]float64 `json:"reconcileErrors,omitempty"`
	// QueueP99 (seconds) by controller: time an item waited in the work
	// queue (workqueue_queue_duration_seconds), i.e. waiting for a worker.
	QueueP99 map[string]float64 `json:"queueP99,omitempty"`
	// API requests of the controllers process (rest_client_requests_total)
	// by method and by status code, and per Machine.
	APIRequests   float64            `json:"apiRequests"`
	APIByMethod   map[string]float64 `json:"apiByMethod,omitempty"`
	APIByCode     map[string]float64 `json:"apiByCode,omitempty"`
	APIPerMachine float64            `json:"apiPerMachine"`
	// APIByResource and NetbootAPIByResource count each process's
	// requests by "verb resource[/subresource]", from the API server's
	// audit log (each process authenticates as its own user).
	APIByResource        map[string]float64 `json:"apiByResource,omitempty"`
	NetbootAPIByResource map[string]float64 `json:"netbootApiByResource,omitempty"`
	// APILatencyMs is the API server's time for the controllers' requests
	// by "verb resource[/subresource]" (audit log: received to response
	// complete; client-side throttling not included): [p50, p99] in ms.
	APILatencyMs map[string][2]float64 `json:"apiLatencyMs,omitempty"`
	// APIServerSeconds is the API server's summed time for the
	// controllers' requests by the same key.
	APIServerSeconds map[string]float64 `json:"apiServerSeconds,omitempty"`
	APIPerSecond     float64            `json:"apiPerSecond"`
	// APIPeakPerSecond is the most requests the controllers made in one
	// second (audit log), against their client-side limit.
	APIPeakPerSecond float64 `json:"apiPeakPerSecond,omitempty"`
	// Netboot* are the network services process (HTTP boot, config
	// delivery, agent API).
	NetbootAPIRequests   float64            `json:"netbootApiRequests"`
	NetbootAPIByMethod   map[string]float64 `json:"netbootApiByMethod,omitempty"`
	NetbootAPIPerMachine float64            `json:"netbootApiPerMachine"`
	// CPU in cores (CPU seconds / window), RSS in bytes: controllers,
	// network services, kube-apiserver + etcd, and this benchmark process
	// (simulated hosts, BMC emulator, watches).
	CPU            float64 `json:"cpu"`
	PeakRSS        int64   `json:"peakRSS"`
	EndRSS         int64   `json:"endRSS"`
	NetbootCPU     float64 `json:"netbootCPU"`
	NetbootPeakRSS int64   `json:"netbootPeakRSS"`
	APIServerCPU   float64 `json:"apiServerCPU"`
	BenchCPU       float64 `json:"benchCPU"`
}

// BMCStats are the Redfish emulator's counters.
type BMCStats struct {
	Requests         int `json:"requests"`
	InjectedErrors   int `json:"injectedErrors"`
	InjectedTimeouts int `json:"injectedTimeouts"`
	Logins           int `json:"logins"`
}

// FleetStats are the simulated hosts' counters.
type FleetStats struct {
	Boots           int64  `json:"boots"`
	BootsFailed     int64  `json:"bootsFailed"`
	ScriptRetries   int64  `json:"scriptRetries"`
	Reports         int64  `json:"reports"`
	Polls           int64  `json:"polls"`
	NodeStatusPosts int64  `json:"nodeStatusPosts"`
	Upgrades        int64  `json:"upgrades"`
	UpgradesFailed  int64  `json:"upgradesFailed"`
	Errors          int64  `json:"errors"`
	LastError       string `json:"lastError,omitempty"`
}

// Rollout is the in-place rollout benchmark (issue 7): a MachineSet of
// simulated hosts changes its kubelet version with maxUnavailable.
type Rollout struct {
	Started        time.Time  `json:"started"`
	Finished       time.Time  `json:"finished"`
	Command        string     `json:"command,omitempty"`
	Load           [2]float64 `json:"load"`
	Setup          string     `json:"setup"`
	Machines       int        `json:"machines"`
	MaxUnavailable int        `json:"maxUnavailable"`
	From           string     `json:"from"`
	To             string     `json:"to"`
	// Completed: every Machine runs To, verified, within the time limit.
	Completed bool `json:"completed"`
	Upgraded  int  `json:"upgraded"`
	// Seconds from the MachineSet patch to the last Machine verified.
	Seconds float64 `json:"seconds"`
	// MaxUpdating is the most Machines seen updating at once (the budget
	// is MaxUnavailable).
	MaxUpdating int `json:"maxUpdating"`
	// Per Machine, seconds: Total from the set patching its version to
	// Verified; Agent from the plan published (Applying) to the agent's
	// outcome posted (poll wait and the simulated apply); Drain the
	// Draining state (cordon, eviction of no pods here); Overhead =
	// Total - Agent: what the controllers add (the set's patch reaching
	// the Machine controller, cordon and drain calls, publishing the plan,
	// noticing the outcome, verifying the Node, uncordon, status writes).
	Total    Dist `json:"total"`
	Agent    Dist `json:"agent"`
	Drain    Dist `json:"drain"`
	Overhead Dist `json:"overhead"`
	// NoticeOutcome: agent outcome posted -> Verified (part of Overhead).
	NoticeOutcome Dist `json:"noticeOutcome"`
	// Work is the anvil processes' work during the rollout; API requests
	// per Machine are per upgraded Machine.
	Work  Work       `json:"work"`
	Fleet FleetStats `json:"fleet"`
	Error string     `json:"error,omitempty"`
}

// Dist summarises per-Machine durations in seconds.
type Dist struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}
