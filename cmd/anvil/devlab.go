//go:build dev

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/lab/stack"
)

// labMissing says why the QEMU lab cannot run here, or "" if it can.
func labMissing(binDir string) string {
	if os.Geteuid() != 0 {
		return "it needs root (network namespaces and tap devices)"
	}
	for _, c := range []string{"qemu-system-x86_64", "ipmi_sim", "ip", "busybox"} {
		if _, err := exec.LookPath(c); err != nil {
			return c + " is not installed (make lab-deps installs the Debian packages)"
		}
	}
	for _, b := range []string{"kubelet", "fake-cri"} {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return "bin/" + b + " is missing (make tools builds it)"
		}
	}
	return ""
}

// runDevLab is `anvil dev --lab`: the control plane, the QEMU lab with
// three hosts behind ipmi_sim and the Redfish emulator, both anvil
// processes (controllers here, network services in the lab's namespace),
// and the lab MachineClass. It prints what to type next and waits for
// Ctrl-C.
func runDevLab(cmd *cobra.Command, cfg devConfig, dir, bin string) error {
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	root, _ := os.Getwd()
	log := newLogger(cfg.serve.LogFormat, cfg.serve.LogLevel)
	start := time.Now()
	fmt.Fprintf(out, "Starting the QEMU lab (first time: the host image is built, about a minute)...\n")
	// With the Debian disk image (make host-image) the VMs get disks and
	// memory enough to install it and run containers (the lab-debian class).
	diskImage, diskMiB, memMiB := filepath.Join(bin, "hostimage", "debian-12-amd64.raw"), 64, 0
	if _, err := os.Stat(diskImage); err == nil {
		diskMiB, memMiB = 4096, 2048
	} else {
		diskImage = ""
	}
	st, err := stack.Start(ctx, stack.Options{
		Dir: filepath.Join(dir, "lab"), BinDir: bin, Anvil: self, RepoRoot: root, RedfishMockup: cfg.RedfishMockup,
		Hosts: []lab.HostOptions{
			{Name: "vm-ipmi", BMC: lab.IPMI, DiskMiB: diskMiB, MemoryMiB: memMiB, BMCPort: 9633},
			{Name: "vm-redfish", BMC: lab.Redfish, DiskMiB: diskMiB, MemoryMiB: memMiB, BMCPort: 9643},
			{Name: "vm-third", BMC: lab.IPMI, DiskMiB: diskMiB, MemoryMiB: memMiB, BMCPort: 9634},
		},
		DiskImage: diskImage,
		Logger:    log.WithName("lab"),
	}, client.Options{Scheme: newScheme()})
	if err != nil {
		return err
	}
	defer st.Stop()
	csv := filepath.Join(dir, "lab", "hosts.csv")
	if err := st.HostsCSV(csv); err != nil {
		return err
	}
	printLabHelp(out, st, csv, time.Since(start))
	// The lab's anvil processes run without the console: it runs here.
	if cfg.serve.Console.Listen != "" {
		if err := devConsoleAdmin(ctx, out, cfg.serve.Console, st.Client); err != nil {
			return err
		}
		go func() {
			if err := (consoleServer{cfg: cfg.serve.Console, rc: st.CP.Config, log: log}).Start(ctx); err != nil {
				log.Error(err, "admin console stopped")
			}
		}()
	}
	ticker := time.NewTicker(2 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "stopping the lab")
			return nil
		case <-ticker.C:
			if err := st.CP.Exited(); err != nil {
				return fmt.Errorf("local control plane failed: %w", err)
			}
		}
	}
}

func printLabHelp(out io.Writer, st *stack.Stack, csv string, took time.Duration) {
	names := []string{}
	for _, h := range st.Lab.Hosts() {
		names = append(names, fmt.Sprintf("%s (%s)", h.Name, h.BMC))
	}
	fmt.Fprintf(out, `
The lab is up (%.0fs): %s, on bridge %s in network namespace %s.
Anvil's controllers log to %s, its DHCP/TFTP/HTTP to %s.
In another shell:

  export KUBECONFIG=%s
  bin/anvil hosts import %s        # register the three VMs (their BMCs are real)
  bin/anvil machines create m1 --class lab --selector anvil.dev/lab=%s --version v1.37.2 --wait
  kubectl get nodes -o wide                   # a real kubelet registered it
  bin/anvil machines delete m1 --wait         # drain, wipe boot, release

Serial consoles: %s/<host>.serial.log. Ctrl-C stops everything.
`, took.Seconds(), strings.Join(names, ", "), st.Lab.Interface(), st.Lab.Namespace(),
		st.LogPath("controllers"), st.LogPath("netboot"), st.Kubeconfig, csv, st.Lab.Namespace(), filepath.Dir(st.Lab.SerialLog(st.Lab.Hosts()[0].Name)))
	if st.DiskClass != nil {
		fmt.Fprintf(out, `
Real hosts: class %s installs the Debian 12 image to the VM's disk, which then
boots it and joins on containerd (under TCG this takes several minutes):

  bin/anvil machines create d1 --class %s --selector anvil.dev/lab=%s --version v1.37.2 --wait --timeout 40m
`, st.DiskClass.Name, st.DiskClass.Name, st.Lab.Namespace())
	} else {
		fmt.Fprintln(out, "\n(make host-image builds the Debian image; the next make run then offers the lab-debian class, installed to disk.)")
	}
}
