package results

import "time"

// Storm is the boot storm (issue 9, part 4): N simulated hosts power on at
// once and PXE-boot from the real Anvil processes (controllers in one,
// DHCP/TFTP/HTTP in another, as in production) against a real
// kube-apiserver, up to the last byte of their config.
type Storm struct {
	// Client says what each simulated host does, in one line.
	Client string `json:"client"`
	// Setup says how Anvil and the control plane ran, in one line.
	Setup string      `json:"setup"`
	Files []StormFile `json:"files"`
	// ClientWaitSeconds is time inside every host's figure that the client
	// spends by design (UEFI firmware collecting offers, the simulated
	// kernel boot), not waiting for Anvil.
	ClientWaitSeconds float64 `json:"clientWaitSeconds"`
	// Started, load averages and the command of this part, kept with it
	// because `run --merge` combines parts from different invocations.
	Started   time.Time   `json:"started"`
	Finished  time.Time   `json:"finished"`
	Command   string      `json:"command,omitempty"`
	LoadStart [3]float64  `json:"loadStart"`
	LoadEnd   [3]float64  `json:"loadEnd"`
	Sizes     []StormSize `json:"sizes"`
	Error     string      `json:"error,omitempty"`
}

// StormFile is one file every host fetches.
type StormFile struct {
	Name  string `json:"name"`
	Via   string `json:"via"` // tftp, http
	Bytes int64  `json:"bytes"`
}

// StormSize is one rack size with its repeated runs.
type StormSize struct {
	Hosts int        `json:"hosts"`
	Runs  []StormRun `json:"runs"`
}

// StormRun is one storm against a freshly started control plane and Anvil.
type StormRun struct {
	Hosts     int `json:"hosts"`
	Succeeded int `json:"succeeded"`
	// LoadMax is the highest 1-minute load average sampled (every 2 s)
	// during the storm: the machine is shared.
	LoadMax float64 `json:"loadMax,omitempty"`
	// SetupSeconds: Hosts and Machines created until every Host had its
	// boot request acknowledged (not part of the storm).
	SetupSeconds float64 `json:"setupSeconds"`
	// Seconds from power-on to the last host finishing (or failing).
	Seconds float64 `json:"seconds"`
	// TTLB is each successful host's time from power-on to the last byte
	// of its config, in seconds, sorted.
	TTLB []float64 `json:"ttlb"`
	P50  float64   `json:"p50"`
	P90  float64   `json:"p90"`
	P99  float64   `json:"p99"`
	Max  float64   `json:"max"`
	// Stages are the per-stage durations of the successful hosts.
	Stages   []StormStage   `json:"stages"`
	Failures []StormFailure `json:"failures,omitempty"`
	Retries  StormRetries   `json:"retries"`
	// UDPDrops are datagrams the kernel dropped because a socket's receive
	// buffer was full (/proc/net/snmp RcvbufErrors), in the server
	// namespace (Anvil's DHCP and TFTP sockets) and the load namespace.
	UDPDrops     uint64 `json:"udpDrops"`
	LoadUDPDrops uint64 `json:"loadUDPDrops"`
	// UDPSendDrops are datagrams a socket sent that the kernel dropped on
	// the way out without telling the sender (/proc/net/snmp
	// SndbufErrors: e.g. no neighbour entry could be made), per namespace.
	UDPSendDrops     uint64 `json:"udpSendDrops"`
	LoadUDPSendDrops uint64 `json:"loadUDPSendDrops"`
	// NeighbourOverflows is how often the kernel found its IPv4
	// neighbour table full during the storm (/proc/net/stat/arp_cache
	// table_fulls, the whole machine).
	NeighbourOverflows uint64 `json:"neighbourOverflows"`
	// Netboot is `anvil serve --controllers none` with DHCP, TFTP and HTTP
	// boot; Controllers the controllers' `anvil serve`; APIServer the
	// kube-apiserver and etcd together (context: they share the CPU).
	Netboot     StormProc  `json:"netboot"`
	Controllers StormProc  `json:"controllers"`
	APIServer   *StormProc `json:"apiServer,omitempty"`
	// Load is the load generator (all simulated hosts), for context.
	Load *StormProc `json:"load,omitempty"`
	// Metrics are counters scraped from the netboot process after the
	// storm (anvil_* series, summed by the labels kept).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// API is what the kube-apiserver saw during the storm, by verb and
	// resource (its own /metrics, the difference between power-on and the
	// last host): requests, mean latency and how many it refused (429).
	API []StormAPI `json:"api,omitempty"`
	// Profile names the CPU profile of the netboot process, if one was
	// taken (perf), and its top functions.
	Profile []string `json:"profile,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// StormStage is one stage's duration over the successful hosts.
type StormStage struct {
	Name string  `json:"name"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// StormFailure is one failure cause and how many hosts it hit.
type StormFailure struct {
	Stage  string `json:"stage"` // dhcp, tftp, http, config
	Reason string `json:"reason"`
	Hosts  int    `json:"hosts"`
}

// StormRetries are the clients' retransmissions and retries, summed.
type StormRetries struct {
	DHCPDiscover int `json:"dhcpDiscover"` // DISCOVERs sent again (firmware, iPXE, OS)
	DHCPRequest  int `json:"dhcpRequest"`  // REQUESTs sent again
	DHCPNak      int `json:"dhcpNak"`      // NAKs received (client starts over)
	TFTP         int `json:"tftp"`         // RRQs and ACKs sent again after a timeout
	TFTPDupData  int `json:"tftpDupData"`  // DATA blocks the server sent twice
	Config       int `json:"config"`       // config fetches repeated (5xx, connection errors)
}

// StormProc is one process's resource use during the storm.
type StormProc struct {
	// CPUSeconds used between power-on and the last host; Cores is that
	// divided by the storm's wall time.
	CPUSeconds float64 `json:"cpuSeconds"`
	Cores      float64 `json:"cores"`
	// IdleRSS just before power-on; PeakRSS the highest during the storm.
	IdleRSS int64 `json:"idleRSS"`
	PeakRSS int64 `json:"peakRSS"`
}

// StormAPI is one verb on one resource at the API server during a storm.
type StormAPI struct {
	Verb     string  `json:"verb"`
	Resource string  `json:"resource"`
	Requests float64 `json:"requests"`
	MeanMs   float64 `json:"meanMs"`
	Rejected float64 `json:"rejected,omitempty"` // answered 429
}
