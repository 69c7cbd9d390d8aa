package storm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// LoadConfig is what the load generator process reads (a JSON file): the
// hosts to simulate and what they should receive.
type LoadConfig struct {
	// Interface is the load namespace's end of the veth pair.
	Interface string     `json:"interface"`
	Server    netip.Addr `json:"server"`
	Arch      uint16     `json:"arch"` // option 93: 7 = x86-64 UEFI
	Hosts     []LoadHost `json:"hosts"`
	// Expected sizes, checked on every host.
	BootFileBytes int64   `json:"bootFileBytes"`
	KernelBytes   int64   `json:"kernelBytes"`
	InitrdBytes   []int64 `json:"initrdBytes"`
	// OSBoot is the simulated kernel boot between the initrd's last byte
	// and the OS's DHCP.
	OSBoot Duration `json:"osBoot"`
	// Spread powers the hosts on evenly over this long (0: all at once).
	Spread Duration `json:"spread"`
	// HostTimeout bounds one host's whole boot; HTTPTimeout one request.
	HostTimeout Duration `json:"hostTimeout"`
	HTTPTimeout Duration `json:"httpTimeout"`
}

// LoadHost is one simulated host.
type LoadHost struct {
	Name string `json:"name"`
	MAC  string `json:"mac"`
}

// LoadResult is what the generator writes when every host is done.
type LoadResult struct {
	Seconds float64      `json:"seconds"`
	Hosts   []HostResult `json:"hosts"`
	// CPUSeconds the generator used from "go" to the last host, and its
	// peak RSS (getrusage), to show it was not the limit.
	CPUSeconds float64 `json:"cpuSeconds"`
	MaxRSS     int64   `json:"maxRSS"`
}

// Duration is a time.Duration that reads and writes as "1.5s".
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// LoadMain is the load generator process (`anvil-bench load storm`), run
// inside the load namespace: it opens the DHCP client socket, says "ready"
// on stdout, waits for a line "go" on stdin (power on), boots every host at
// once, writes the LoadResult to --out and says "done".
func LoadMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load storm", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "LoadConfig JSON file")
	out := fs.String("out", "", "where to write the LoadResult JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := os.ReadFile(*cfgPath)
	if err != nil {
		return err
	}
	var cfg LoadConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("%s: %w", *cfgPath, err)
	}
	macs := make([]net.HardwareAddr, len(cfg.Hosts))
	for i, h := range cfg.Hosts {
		if macs[i], err = net.ParseMAC(h.MAC); err != nil {
			return fmt.Errorf("host %s: %w", h.Name, err)
		}
	}
	d, err := openDHCP(cfg.Interface)
	if err != nil {
		return err
	}
	defer d.Close()
	fmt.Fprintln(stdout, "ready")

	lines := bufio.NewScanner(stdin)
	if !lines.Scan() || lines.Text() != "go" {
		return errors.New("load storm: no \"go\" on stdin")
	}
	o := bootOptions{
		Arch: cfg.Arch, Server: cfg.Server, BootFile: cfg.BootFileBytes, Kernel: cfg.KernelBytes, Initrds: cfg.InitrdBytes,
		OSBoot: time.Duration(cfg.OSBoot), HTTPTimeout: time.Duration(cfg.HTTPTimeout), MaxScriptRetries: 3,
	}
	res := LoadResult{Hosts: make([]HostResult, len(cfg.Hosts))}
	cpu0, _ := selfUsage()
	origin := time.Now()
	var done atomic.Int64
	stopProgress := progress(stderr, &done, len(cfg.Hosts))
	var wg sync.WaitGroup
	for i, h := range cfg.Hosts {
		delay := time.Duration(0)
		if n := len(cfg.Hosts); n > 1 {
			delay = time.Duration(cfg.Spread) * time.Duration(i) / time.Duration(n)
		}
		wg.Go(func() {
			defer done.Add(1)
			if err := sleep(ctx, delay); err != nil {
				res.Hosts[i] = HostResult{Name: h.Name, MAC: h.MAC, Stage: StageDHCP, Reason: "never powered on: " + err.Error()}
				return
			}
			hctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.HostTimeout))
			defer cancel()
			res.Hosts[i] = boot(hctx, d, o, h.Name, macs[i], origin)
		})
	}
	wg.Wait()
	stopProgress()
	res.Seconds = time.Since(origin).Seconds()
	cpu1, rss := selfUsage()
	res.CPUSeconds, res.MaxRSS = cpu1-cpu0, rss
	b, err = json.Marshal(res)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "done")
	return nil
}

// progress prints how many hosts are done every 10 s (the log of a long
// storm).
func progress(w io.Writer, done *atomic.Int64, total int) func() {
	stop := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fmt.Fprintf(w, "%s %d/%d hosts done after %s\n", time.Now().Format("15:04:05"), done.Load(), total, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(stop); <-finished }
}

// selfUsage is this process's CPU seconds (user+system) and peak RSS.
func selfUsage() (float64, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime), ru.Maxrss * 1024
}
