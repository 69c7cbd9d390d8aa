package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// InstallOutcome is how the install of a MachineClass's spec.image onto a
// Host's root device ended.
// +kubebuilder:validation:Enum=Installed;Failed
type InstallOutcome string

const (
	// InstallInstalled: the image was written and verified, the seed of the
	// installed OS's cloud-init written; the Host boots from its disk.
	InstallInstalled InstallOutcome = "Installed"
	// InstallFailed: see reason and message. The boot attempt fails.
	InstallFailed InstallOutcome = "Failed"
)

// InstallFailureReason says which step of an install failed.
// +kubebuilder:validation:Enum=NoRootDevice;DownloadFailed;ChecksumMismatch;WriteFailed;SeedFailed
type InstallFailureReason string

const (
	// InstallNoRootDevice: no disk the installer saw matches
	// spec.rootDeviceHints (the message names the hints and the disks).
	InstallNoRootDevice InstallFailureReason = "NoRootDevice"
	// InstallDownloadFailed: the image could not be read in full.
	InstallDownloadFailed InstallFailureReason = "DownloadFailed"
	// InstallChecksumMismatch: what was written is not the image of
	// spec.image.sha256 (the installer blanks the disk's ends then).
	InstallChecksumMismatch InstallFailureReason = "ChecksumMismatch"
	// InstallWriteFailed: the root device refused the write.
	InstallWriteFailed InstallFailureReason = "WriteFailed"
	// InstallSeedFailed: the image has no partition named anvil-root, or
	// its filesystem could not take cloud-init's seed.
	InstallSeedFailed InstallFailureReason = "SeedFailed"
)

// HostInstall is the last install of an OS image onto the Host's disk, as
// its installer reported it. Written by the config endpoint (boot/delivery).
type HostInstall struct {
	// BootRequestID is the status.bootRequestID of the boot that installed.
	BootRequestID string         `json:"bootRequestID"`
	Outcome       InstallOutcome `json:"outcome"`
	// +optional
	Reason InstallFailureReason `json:"reason,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Message string `json:"message,omitempty"`
	// Device is the disk written (a kernel name: vda, sda, nvme0n1).
	// +optional
	Device string `json:"device,omitempty"`
	// ImageSHA256 is the SHA-256 of what was written.
	// +optional
	ImageSHA256 string `json:"imageSHA256,omitempty"`
	// +optional
	BytesWritten int64       `json:"bytesWritten,omitempty"`
	FinishedAt   metav1.Time `json:"finishedAt"`
}

// ConditionInstalled on a Host: True once this boot's image is on its disk;
// False with an InstallFailureReason. Written with status.install.
const ConditionInstalled = "Installed"

// ReasonInstallFailed on a Machine's InfrastructureReady: the Host's
// installer reported a failure for this boot.
const ReasonInstallFailed = "InstallFailed"

// ReasonInstalled on a Machine's InfrastructureReady: the image is on the
// Host's disk, which it boots now (cloud-init then fetches its config).
const ReasonInstalled = "Installed"
