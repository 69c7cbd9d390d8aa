package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"anvil.dev/anvil/agent"
)

// Default config locations: the JSON file, else the env-file the example
// MachineClasses write (KEY=VALUE lines, also usable as a systemd
// EnvironmentFile).
const (
	defaultConfigJSON = "/etc/anvil/agent.json"
	defaultConfigEnv  = "/etc/anvil/agent.env"
)

// Config is everything the agent needs; the rendered Ignition/cloud-init
// writes it. JSON form (all but endpoint and credential optional):
//
//	{"endpoint": "http://10.0.0.1", "credential": "<hostUID>.<secret>",
//	 "caFile": "", "nodeName": "n1", "kubeconfig": "/etc/kubernetes/kubelet.conf",
//	 "reportInterval": "10m", "pollInterval": "30s",
//	 "kubelet": {"manager": "auto", "unit": "kubelet", "binPath": "/usr/local/bin/kubelet",
//	             "args": [], "healthzURL": "http://127.0.0.1:10248/healthz", "healthCheckTimeout": "5m"},
//	 "wipe": {"disabled": false, "allowRootDisk": false, "devices": []}}
type Config struct {
	Endpoint   string `json:"endpoint"`
	Credential string `json:"credential"`
	// CAFile verifies an https endpoint (system roots when empty).
	CAFile string `json:"caFile,omitempty"`
	// Root prefixes every path the agent reads or writes (tests, chroots).
	Root string `json:"root,omitempty"`
	// NodeName is the host's Node (default: the hostname).
	NodeName string `json:"nodeName,omitempty"`
	// Kubeconfig is the kubelet's kubeconfig, used to check the Node
	// after an upgrade (default /etc/kubernetes/kubelet.conf when present;
	// without one only healthz is checked).
	Kubeconfig     string        `json:"kubeconfig,omitempty"`
	ReportInterval Duration      `json:"reportInterval,omitempty"`
	PollInterval   Duration      `json:"pollInterval,omitempty"`
	Kubelet        KubeletConfig `json:"kubelet,omitempty"`
	Wipe           WipeConfig    `json:"wipe,omitempty"`
	LogLevel       int           `json:"logLevel,omitempty"`
}

// KubeletConfig says how the kubelet is run and checked.
type KubeletConfig struct {
	// Manager: "systemd", "supervisor" (the agent runs current/kubelet
	// itself) or "auto" (systemd when it is the init system).
	Manager string `json:"manager,omitempty"`
	Unit    string `json:"unit,omitempty"`
	// BinPath, if set, is kept as a symlink to current/kubelet (an existing
	// binary there is adopted first): for units that run a fixed path.
	BinPath            string   `json:"binPath,omitempty"`
	Args               []string `json:"args,omitempty"`
	LogFile            string   `json:"logFile,omitempty"`
	HealthzURL         string   `json:"healthzURL,omitempty"`
	HealthCheckTimeout Duration `json:"healthCheckTimeout,omitempty"`
}

// WipeConfig limits the wipe action.
type WipeConfig struct {
	Disabled      bool     `json:"disabled,omitempty"`
	AllowRootDisk bool     `json:"allowRootDisk,omitempty"`
	Devices       []string `json:"devices,omitempty"`
}

// Duration is a time.Duration written as "30s" in JSON.
type Duration struct{ time.Duration }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("a duration must be a string like \"30s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("invalid duration %q", s)
	}
	d.Duration = v
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// options are the command line.
type options struct {
	configPath string
	endpoint   string
	nodeName   string
	root       string
	logLevel   int
	logFormat  string
	once       bool
	version    bool
	printFacts bool
	set        map[string]bool // flags given explicitly
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{set: map[string]bool{}}
	fs := flag.NewFlagSet("anvil-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: anvil-agent [flags]\n       anvil-agent install [flags] (write the OS image of a provisioning boot; see anvil-agent install -h)")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.configPath, "config", "", "config file: JSON, or KEY=VALUE lines (default "+defaultConfigJSON+", else "+defaultConfigEnv+")")
	fs.StringVar(&o.endpoint, "endpoint", "", "Anvil HTTP endpoint (overrides the config file)")
	fs.StringVar(&o.nodeName, "node-name", "", "the host's Node name (overrides the config file)")
	fs.StringVar(&o.root, "root", "", "prefix for every path the agent touches (overrides the config file)")
	fs.IntVar(&o.logLevel, "v", 0, "log verbosity")
	fs.StringVar(&o.logFormat, "log-format", "json", "json or text")
	fs.BoolVar(&o.once, "once", false, "resume, report, act on one action, then exit")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.BoolVar(&o.printFacts, "print-facts", false, "print the facts the agent would report, and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	return o, nil
}

// loadConfig reads the config file and applies flag overrides. Errors
// never contain the credential.
func loadConfig(o *options) (*Config, error) {
	p := o.configPath
	if p == "" {
		p = defaultConfigJSON
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			p = defaultConfigEnv
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	cfg, err := parseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", p, err)
	}
	if o.set["endpoint"] {
		cfg.Endpoint = o.endpoint
	}
	if o.set["node-name"] {
		cfg.NodeName = o.nodeName
	}
	if o.set["root"] {
		cfg.Root = o.root
	}
	if o.set["v"] {
		cfg.LogLevel = o.logLevel
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", p, err)
	}
	return cfg, nil
}

// parseConfig accepts JSON (first non-blank byte '{') or KEY=VALUE lines.
func parseConfig(b []byte) (*Config, error) {
	cfg := &Config{}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(cfg); err != nil {
			// encoding/json errors name fields and types, never values.
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return cfg, nil
	}
	return cfg, parseEnvFile(b, cfg)
}

// envKeys maps env-file keys to config fields.
var envKeys = map[string]func(*Config, string) error{
	"ANVIL_ENDPOINT":   func(c *Config, v string) error { c.Endpoint = v; return nil },
	"ANVIL_CREDENTIAL": func(c *Config, v string) error { c.Credential = v; return nil },
	"ANVIL_CA_FILE":    func(c *Config, v string) error { c.CAFile = v; return nil },
	"ANVIL_NODE_NAME":  func(c *Config, v string) error { c.NodeName = v; return nil },
	"ANVIL_KUBECONFIG": func(c *Config, v string) error { c.Kubeconfig = v; return nil },
	"ANVIL_ROOT":       func(c *Config, v string) error { c.Root = v; return nil },
	"ANVIL_KUBELET_MANAGER": func(c *Config, v string) error {
		c.Kubelet.Manager = v
		return nil
	},
	"ANVIL_KUBELET_BIN": func(c *Config, v string) error { c.Kubelet.BinPath = v; return nil },
	"ANVIL_HEALTHZ_URL": func(c *Config, v string) error { c.Kubelet.HealthzURL = v; return nil },
	"ANVIL_WIPE_DISABLED": func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("ANVIL_WIPE_DISABLED must be true or false")
		}
		c.Wipe.Disabled = b
		return nil
	},
}

func parseEnvFile(b []byte, cfg *Config) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return fmt.Errorf("line %d is not KEY=VALUE", n) // never echo the line: it may be the credential
		}
		k = strings.TrimSpace(strings.TrimPrefix(k, "export "))
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		set, ok := envKeys[k]
		if !ok {
			if strings.HasPrefix(k, "ANVIL_") {
				return fmt.Errorf("line %d: unknown key %s", n, k)
			}
			continue // other keys belong to whatever else reads the file
		}
		if err := set(cfg, v); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return sc.Err()
}

func (c *Config) validate() error {
	if c.Endpoint == "" {
		return errors.New("endpoint is required")
	}
	if c.Credential == "" {
		return errors.New("credential is required")
	}
	if _, err := agent.HostUID(c.Credential); err != nil {
		return errors.New("credential is not of the form <hostUID>.<secret>")
	}
	switch c.Kubelet.Manager {
	case "", "auto", "systemd", "supervisor":
	default:
		return fmt.Errorf("kubelet.manager must be auto, systemd or supervisor, not %q", c.Kubelet.Manager)
	}
	if c.Root == "" {
		c.Root = "/"
	}
	return nil
}
