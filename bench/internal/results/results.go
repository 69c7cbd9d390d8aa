// Package results is the JSON a benchmark run writes and the report and
// plots read: raw per-run figures, so medians and ratios are computed (and
// can be recomputed) from the data.
package results

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Run is one invocation of `anvil-bench run`.
type Run struct {
	Smoke    bool      `json:"smoke"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Machine  Machine   `json:"machine"`
	// Command is how this run was started.
	Command string `json:"command"`
	// LoadStart and LoadEnd are /proc/loadavg's 1, 5 and 15 minute
	// averages before and after the run.
	LoadStart [3]float64 `json:"loadStart"`
	LoadEnd   [3]float64 `json:"loadEnd"`
	// LoadMax is the highest 1-minute load average sampled (every 5 s)
	// while the run went on.
	LoadMax float64 `json:"loadMax,omitempty"`
	// BusyProcs lists other processes that used a lot of CPU when the run
	// started (the machine is shared).
	BusyProcs []string `json:"busyProcs,omitempty"`

	DHCP   *DHCP   `json:"dhcp,omitempty"`
	TFTP   *TFTP   `json:"tftp,omitempty"`
	HTTP   *HTTP   `json:"http,omitempty"`
	Render *Render `json:"render,omitempty"`
	// Storm is the boot storm (storm.go).
	Storm *Storm `json:"storm,omitempty"`
	// Scale and Rollout are the controller benchmarks (scale.go).
	Scale   *Scale   `json:"scale,omitempty"`
	Rollout *Rollout `json:"rollout,omitempty"`
	// Console is the admin console benchmark (console.go).
	Console *Console `json:"console,omitempty"`
	Errors  []string `json:"errors,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUModel string            `json:"cpuModel"`
	CPUs     int               `json:"cpus"`
	MemoryMB int64             `json:"memoryMB"`
	Kernel   string            `json:"kernel"`
	OS       string            `json:"os"`
	Go       string            `json:"go"`
	Netem    bool              `json:"netem"`
	Versions map[string]string `json:"versions"`
}

// DHCP is the DHCP rate benchmark: perfdhcp against each subject.
type DHCP struct {
	// Measured says when this part ran (nil: in the run of the file's
	// header).
	Measured     *Measured     `json:"measured,omitempty"`
	Reservations int           `json:"reservations"`
	StepSeconds  float64       `json:"stepSeconds"`
	MaxDrop      float64       `json:"maxDrop"` // fraction, 0.025
	Subjects     []DHCPSubject `json:"subjects"`
	// Modes say how each mode's load was sent. Results from before there
	// were modes have none: every subject ran in relay mode (perfdhcp).
	Modes []DHCPMode `json:"modes,omitempty"`
	// ProductSetup describes the product path's API server and Hosts
	// (the "anvil serve" subjects); empty when it was not run.
	ProductSetup string `json:"productSetup,omitempty"`
}

// DHCPMode is one way of offering the load.
type DHCPMode struct {
	Name      string `json:"name"`      // "relay" or "broadcast"
	Generator string `json:"generator"` // one line: what sent it and how
}

// DHCPSubject is one server's runs in one mode.
type DHCPSubject struct {
	Name string `json:"name"`
	// Mode is "relay" or "broadcast"; empty means relay (older results).
	Mode   string    `json:"mode,omitempty"`
	Config string    `json:"config"` // one line: how it was configured
	Runs   []DHCPRun `json:"runs"`
	Error  string    `json:"error,omitempty"`
}

// DHCPRun is one ramp of offered rates against a freshly started server.
type DHCPRun struct {
	Steps []DHCPStep `json:"steps"`
	// MaxRate is the highest DORA/s completed in a step whose drop was
	// within MaxDrop (0 if none).
	MaxRate float64 `json:"maxRate"`
	// IdleRSS is the server's RSS after loading the reservations, before
	// any load; PeakRSS the highest seen during the run.
	IdleRSS int64 `json:"idleRSS"`
	PeakRSS int64 `json:"peakRSS"`
	// Latency holds the steps run with perfdhcp's per-packet timestamps
	// (at 500/s and at the highest passing rate); their P50 and P99 are
	// copied to the Steps at the same offered rate, which run without
	// timestamps (they slow perfdhcp down).
	Latency []DHCPStep `json:"latency,omitempty"`
}

// DHCPStep is one perfdhcp run at a fixed offered rate.
type DHCPStep struct {
	Offered  int     `json:"offered"`  // -r
	Sent     int     `json:"sent"`     // DISCOVERs sent
	Acks     int     `json:"acks"`     // ACKs received
	Achieved float64 `json:"achieved"` // completed DORA/s
	Drop     float64 `json:"drop"`     // 1 - acks/discovers
	// P50 and P99 are the round-trip times in ms of DISCOVER-OFFER and
	// REQUEST-ACK exchanges pooled.
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	// CPU is the server's CPU use during the step, in cores (1 = one core
	// busy the whole step).
	CPU float64 `json:"cpu"`
	RSS int64   `json:"rss"`
	// GenCPU is the load generator's CPU over its sending period, in cores
	// (all its threads): near 1, the generator's one core is the limit.
	// Zero in results from before it was measured.
	GenCPU float64 `json:"genCPU,omitempty"`
}

// TFTP is the TFTP throughput benchmark: concurrent atftp clients.
type TFTP struct {
	// Measured says when this part ran (nil: in the run of the file's
	// header).
	Measured *Measured     `json:"measured,omitempty"`
	Seconds  float64       `json:"seconds"` // each client keeps fetching this long
	Impaired string        `json:"impaired,omitempty"`
	Files    []TFTPFile    `json:"files"`
	Subjects []TFTPSubject `json:"subjects"`
}

// TFTPFile is a file every subject serves.
type TFTPFile struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// TFTPSubject is one server.
type TFTPSubject struct {
	Name   string     `json:"name"`
	Config string     `json:"config"`
	Cells  []TFTPCell `json:"cells"`
	Error  string     `json:"error,omitempty"`
}

// TFTPCell is one file, block size, client count and link condition, with
// its repeated runs.
type TFTPCell struct {
	File       string        `json:"file"`
	BlockSize  int           `json:"blockSize"`
	Clients    int           `json:"clients"`
	WindowSize int           `json:"windowSize,omitempty"` // RFC 7440 option asked for; 0 = not asked
	Impaired   bool          `json:"impaired,omitempty"`
	Runs       []TFTPMeasure `json:"runs"`
}

// TFTPMeasure is one run of one cell.
type TFTPMeasure struct {
	Attempts  int     `json:"attempts"`
	Completed int     `json:"completed"`
	Bytes     int64   `json:"bytes"`
	Seconds   float64 `json:"seconds"`
	MBps      float64 `json:"mbps"` // completed file bytes / wall time, 10^6 bytes/s
	// ServerPackets is what the server sent; MinPackets what the completed
	// transfers needed at least (data blocks plus one OACK each).
	ServerPackets uint64 `json:"serverPackets"`
	MinPackets    uint64 `json:"minPackets"`
	// Retransmit is (ServerPackets-MinPackets)/MinPackets: resent blocks,
	// plus the packets of failed transfers.
	Retransmit float64 `json:"retransmit"`
	P99        float64 `json:"p99"` // seconds per transfer
	CPU        float64 `json:"cpu"` // server cores
	PeakRSS    int64   `json:"peakRSS"`
}

// HTTP is the HTTP artifact benchmark.
type HTTP struct {
	// Measured says when this part ran (nil: in the run of the file's
	// header).
	Measured  *Measured     `json:"measured,omitempty"`
	FileBytes int64         `json:"fileBytes"`
	Subjects  []HTTPSubject `json:"subjects"`
}

// HTTPSubject is one server.
type HTTPSubject struct {
	Name   string `json:"name"`
	Config string `json:"config"`
	// FirstFetch is the time until the first complete download after
	// start (for Anvil it includes hashing the file once).
	FirstFetch float64    `json:"firstFetch"`
	Cells      []HTTPCell `json:"cells"`
	Error      string     `json:"error,omitempty"`
}

// HTTPCell is one client count with its runs.
type HTTPCell struct {
	Clients int           `json:"clients"`
	Runs    []HTTPMeasure `json:"runs"`
}

// HTTPMeasure is one run: every client fetches the file Rounds times.
type HTTPMeasure struct {
	Fetches  int     `json:"fetches"`
	Failures int     `json:"failures"`
	Bytes    int64   `json:"bytes"`
	Seconds  float64 `json:"seconds"`
	MBps     float64 `json:"mbps"`
	P50      float64 `json:"p50"` // seconds to last byte
	P99      float64 `json:"p99"`
	CPU      float64 `json:"cpu"`
	PeakRSS  int64   `json:"peakRSS"`
}

// Render is the config rendering benchmark.
type Render struct {
	// Measured says when this part ran (nil: in the run of the file's
	// header).
	Measured *Measured       `json:"measured,omitempty"`
	Hosts    int             `json:"hosts"`
	Template string          `json:"template"`
	Subjects []RenderSubject `json:"subjects"`
}

// RenderSubject is one way of rendering (Anvil cold, Anvil cached, the
// butane CLI per host).
type RenderSubject struct {
	Name  string          `json:"name"`
	Hosts int             `json:"hosts"` // hosts rendered per run (a sample for slow peers)
	Runs  []RenderMeasure `json:"runs"`
	Error string          `json:"error,omitempty"`
}

// RenderMeasure is one pass over the hosts.
type RenderMeasure struct {
	PerSecond float64 `json:"perSecond"`
	P50       float64 `json:"p50"` // ms per render
	P99       float64 `json:"p99"`
}

// Write stores r as indented JSON.
func Write(path string, r *Run) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Read loads a run.
func Read(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Measured is when one part of the results was measured, and how: a part
// merged from a later run keeps its own, so the report can date every
// section.
type Measured struct {
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Command  string    `json:"command"`
	// LoadStart and LoadEnd: the 1, 5 and 15 minute load averages.
	LoadStart [3]float64 `json:"loadStart"`
	LoadEnd   [3]float64 `json:"loadEnd"`
}
