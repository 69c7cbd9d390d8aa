package lab

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"anvil.dev/anvil/test/bmctest"
	"anvil.dev/anvil/test/pxetest"
	"anvil.dev/anvil/test/redfishsim"
)

// startBMC starts the host's BMC with the VM off. ipmi_sim calls the power
// script itself (its chassis_control hook); Redfish power events go through
// a per-host queue, so that they reach the script in order.
func (l *Lab) startBMC(v *vm) error {
	cred := v.host.Credentials
	switch v.BMC {
	case Manual:
		v.host.BMCAddress = "manual://" + v.Name
	case IPMI:
		sim, err := bmctest.NewIPMISim(bmctest.IPMISimOptions{Dir: filepath.Join(v.dir, "bmc"), Port: v.BMCPort,
			Username: cred.Username, Password: cred.Password, Hook: []string{l.PowerScript(), "ipmi", v.Name}})
		if err != nil {
			return fmt.Errorf("lab: host %s: IPMI BMC: %w", v.Name, err)
		}
		v.ipmi = sim
		if err := os.WriteFile(filepath.Join(v.dir, "ipmi_sim.pid"), []byte(strconv.Itoa(sim.PID())+"\n"), 0o644); err != nil {
			return err
		}
		v.host.BMCAddress = sim.Address()
	case Redfish:
		port := v.BMCPort // 0: the listener picks one
		v.events = make(chan redfishsim.PowerEvent, 64)
		ctx := context.Background()
		sim, err := redfishsim.New(redfishsim.Options{MockupDir: l.o.RedfishMockup, TLS: true,
			Addr:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			Username: cred.Username, Password: cred.Password,
			Systems: []redfishsim.SystemOptions{{PowerState: "Off", MACs: []string{v.MAC.String()}}},
			OnPower: func(ev redfishsim.PowerEvent) {
				select {
				case v.events <- ev:
				case <-l.runCtx.Done():
				}
			},
			// Synchronous: the image is in place before the BMC answers.
			OnMedia: func(ev redfishsim.MediaEvent) { l.onMedia(v, ev) },
			Logger:  l.log.WithName("redfish").WithValues("host", v.Name)})
		if err != nil {
			return fmt.Errorf("lab: host %s: Redfish BMC: %w", v.Name, err)
		}
		v.rf, v.rfID = sim, sim.SystemIDs()[0]
		v.host.BMCAddress = sim.BMCAddress() + sim.SystemPath(v.rfID)
		v.host.CertPEM = sim.CertPEM()
		// The mockup ships with a pending one-time PXE override; a server
		// fresh from the crate has none.
		mode := "Legacy"
		if v.Firmware == pxetest.UEFI {
			mode = "UEFI"
		}
		if err := l.redfishRequest(ctx, v, http.MethodPatch, sim.SystemPath(v.rfID),
			map[string]any{"Boot": map[string]any{"BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideMode": mode}}); err != nil {
			return fmt.Errorf("lab: host %s: clearing the Redfish boot override: %w", v.Name, err)
		}
		l.wg.Go(func() { l.redfishWorker(l.runCtx, v) })
	}
	return nil
}

// redfishWorker applies a Redfish host's power events in order.
func (l *Lab) redfishWorker(ctx context.Context, v *vm) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-v.events:
			args := []string{"off", v.Name}
			if ev.On {
				boot := BootNormal
				switch ev.BootTarget {
				case "Pxe":
					boot = BootPXE
				case "Cd":
					boot = BootCD
				case "UefiHttp":
					boot = BootHTTP
				}
				mode := "on"
				if ev.Restart {
					mode = "reset"
				}
				args = []string{mode, v.Name, boot}
			}
			l.power(args...)
		}
	}
}

// power runs the power script (not tied to the lab's context: a start that
// is cut short could leave a VM without a pid file).
func (l *Lab) power(args ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, l.PowerScript(), args...).CombinedOutput()
	if err != nil {
		l.log.Error(err, "power script failed", "args", strings.Join(args, " "), "output", strings.TrimSpace(string(out)))
		return
	}
	l.log.V(1).Info("power", "args", strings.Join(args, " "), "took", time.Since(start).Round(time.Millisecond))
}

// redfishRequest sends a request with basic auth to the host's Redfish BMC.
func (l *Lab) redfishRequest(ctx context.Context, v *vm, method, path string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, v.rf.URL()+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.SetBasicAuth(v.host.Credentials.Username, v.host.Credentials.Password)
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: v.rf.CertPool(), MinVersion: tls.VersionTLS12}}}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// watch keeps the BMCs honest: a VM that stopped by itself (the guest
// powered off, qemu crashed or did not start) makes its BMC report Off.
func (l *Lab) watch(ctx context.Context) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, v := range l.hosts {
			if l.vmStopped(v) {
				l.bmcOff(ctx, v)
			}
		}
	}
}

// vmStopped reports (once) that the host's VM is meant to run but is gone.
// It holds the power script's lock, so it never sees a power action half
// done.
func (l *Lab) vmStopped(v *vm) bool {
	f, err := lockFile(filepath.Join(v.dir, "lock"), false)
	if err != nil {
		return false // the power script is busy with this host
	}
	defer f.Close()
	p := filepath.Join(v.dir, "power")
	b, _ := os.ReadFile(p)
	if strings.TrimSpace(string(b)) != "on" || v.running() {
		return false
	}
	if err := os.WriteFile(p, []byte("off\n"), 0o644); err != nil {
		l.log.Error(err, "recording a stopped VM", "host", v.Name)
	}
	return true
}

// bmcOff makes the BMC report Off without a power action on the VM (for
// Redfish the ForceOff does call the power script, which finds nothing to
// kill).
func (l *Lab) bmcOff(ctx context.Context, v *vm) {
	l.log.Info("VM stopped by itself; its BMC now reports Off", "host", v.Name, "serialLog", l.SerialLog(v.Name))
	var err error
	switch {
	case v.ipmi != nil:
		if on, _ := v.ipmi.PowerOn(); on {
			err = v.ipmi.SetPowerOn(false)
		}
	case v.rf != nil:
		if v.rf.PowerState(v.rfID) == "On" {
			err = l.redfishRequest(ctx, v, http.MethodPost, v.rf.SystemPath(v.rfID)+"/Actions/ComputerSystem.Reset",
				map[string]string{"ResetType": "ForceOff"})
		}
	}
	if err != nil && ctx.Err() == nil {
		l.log.Error(err, "setting the BMC's power state to Off", "host", v.Name)
	}
}
