package agent

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The install protocol: a provisioning boot of a MachineClass with
// spec.image boots the class's kernel and initrd (an installer: the agent's
// initramfs) with InstallArg on the kernel command line. Its value is the
// plan URL: <base>/config/<mac>/install?cred=<one-time boot credential>.
//
//  1. The installer POSTs an InstallRequest (the disks it sees) to the plan
//     URL. Anvil picks the root device with the Host's
//     spec.rootDeviceHints (one implementation, server side) and answers an
//     InstallPlan; if no disk matches it records the failure on the Host
//     and answers 422 with an ErrorResponse that names the hint.
//  2. The installer streams Plan.Image onto /dev/<Plan.Device>, verifying
//     the SHA-256 while it writes, re-reads the partition table, and writes
//     Plan.SeedURL into the installed OS as cloud-init's NoCloud seed
//     (InstallSeedFile on the partition labelled InstallRootPartLabel).
//  3. It POSTs an InstallResult to ResultURL(plan URL), then reboots. Anvil
//     records the result on the Host; from then on the Host's boot script
//     exits to the local disk, whose cloud-init fetches the seed (spending
//     the one-time credential) and joins.
//
// Neither request spends the boot credential: both are checked (right
// Host, right address, not expired, not used yet), so that the installed
// OS can still use it once.
const (
	// InstallArg is the kernel argument that makes the initramfs install.
	InstallArg = "anvil.install"
	// InstallResultSuffix is appended to the plan URL's path for results.
	InstallResultSuffix = "/result"
	// InstallRootPartLabel is the GPT partition name of the image's root
	// filesystem (ext4). Host images must use it.
	InstallRootPartLabel = "anvil-root"
	// InstallSeedFile is where, in the root filesystem, the installer
	// writes the NoCloud seed (cloud-init reads /etc/cloud/cloud.cfg.d in
	// every version admins run, Debian 12's 22.4 included). The name sorts
	// after Debian's 90_dpkg.cfg, whose datasource_list would win otherwise.
	InstallSeedFile = "etc/cloud/cloud.cfg.d/99-anvil-seed.cfg"
)

// InstallRequest is what the installer tells before it gets its plan.
type InstallRequest struct {
	// BootID of the installer's boot (/proc/sys/kernel/random/boot_id).
	BootID string `json:"bootID"`
	// AgentVersion is the installer's anvil-agent build.
	AgentVersion string `json:"agentVersion,omitempty"`
	// Disks are the whole disks the installer sees (facts.Collect).
	Disks []Disk `json:"disks"`
}

// InstallImage is the OS image to write.
type InstallImage struct {
	// URL is absolute http(s).
	URL string `json:"url"`
	// SHA256 of the whole image, hex.
	SHA256 string `json:"sha256"`
}

// InstallPlan is the answer to an InstallRequest.
type InstallPlan struct {
	// Device is the kernel name of the disk to write (vda, sda, nvme0n1).
	Device string       `json:"device"`
	Image  InstallImage `json:"image"`
	// SeedURL is the NoCloud seed (ending in "/") the installed OS's
	// cloud-init reads its meta-data and user-data from. It carries the
	// boot credential: the installer writes it only into the root
	// filesystem (mode 0600) and never logs it.
	SeedURL string `json:"seedURL"`
}

// InstallOutcome is how an install ended.
type InstallOutcome string

const (
	InstallSucceeded InstallOutcome = "Installed"
	InstallFailed    InstallOutcome = "Failed"
)

// InstallFailure says why an install failed: one value per step that can.
type InstallFailure string

const (
	InstallNoRootDevice     InstallFailure = "NoRootDevice"
	InstallDownloadFailed   InstallFailure = "DownloadFailed"
	InstallChecksumMismatch InstallFailure = "ChecksumMismatch"
	InstallWriteFailed      InstallFailure = "WriteFailed"
	InstallSeedFailed       InstallFailure = "SeedFailed"
)

// InstallResult is posted to ResultURL once the install ended.
type InstallResult struct {
	BootID  string         `json:"bootID"`
	Outcome InstallOutcome `json:"outcome"`
	// Reason is set when Outcome is InstallFailed.
	Reason InstallFailure `json:"reason,omitempty"`
	// Message is human-readable (at most MaxReasonLen bytes); it never
	// holds the seed URL.
	Message string `json:"message,omitempty"`
	// Device written, its image's SHA-256 and the bytes written.
	Device       string `json:"device,omitempty"`
	SHA256       string `json:"sha256,omitempty"`
	BytesWritten int64  `json:"bytesWritten,omitempty"`
}

// InstallResultURL returns where the result of the plan at planURL goes:
// the plan URL's path plus InstallResultSuffix, same query.
func InstallResultURL(planURL string) (string, error) {
	u, err := url.Parse(planURL)
	if err != nil {
		return "", fmt.Errorf("install plan URL: %w", err)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + InstallResultSuffix
	u.RawPath = ""
	return u.String(), nil
}

// Validate checks a plan before the installer acts on it.
func (p *InstallPlan) Validate() error {
	switch {
	case p == nil:
		return errors.New("no install plan")
	case p.Device == "" || len(p.Device) > MaxStringLen || strings.ContainsAny(p.Device, "/\\."):
		return fmt.Errorf("install plan: device %q is not a kernel disk name", p.Device)
	case !sha256RE.MatchString(p.Image.SHA256):
		return errors.New("install plan: image.sha256 is not 64 hex digits")
	case !strings.HasSuffix(p.SeedURL, "/"):
		return errors.New("install plan: seedURL must end in /")
	}
	for name, raw := range map[string]string{"image.url": p.Image.URL, "seedURL": p.SeedURL} {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("install plan: %s is not an absolute http(s) URL", name)
		}
	}
	return nil
}

// Validate checks a result before the server records it.
func (r *InstallResult) Validate() error {
	switch {
	case r.Outcome != InstallSucceeded && r.Outcome != InstallFailed:
		return fmt.Errorf("outcome %q is neither %s nor %s", r.Outcome, InstallSucceeded, InstallFailed)
	case r.Outcome == InstallFailed && r.Reason == "":
		return errors.New("a failed install needs a reason")
	case r.Outcome == InstallSucceeded && (r.Device == "" || !sha256RE.MatchString(r.SHA256)):
		return errors.New("an install that succeeded names its device and sha256")
	case len(r.Message) > MaxReasonLen, len(r.Device) > MaxStringLen, len(r.BootID) > MaxStringLen:
		return errors.New("install result: a field is too long")
	}
	return nil
}
