package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func TestRootDeviceHintsPick(t *testing.T) {
	const gib = int64(1) << 30
	disks := []metalv1.Disk{
		{Name: "sdb", SizeBytes: 960 * gib, Serial: "S2", Rotational: true, Model: "ST1000NM0055-1V4", WWN: "naa.5000c500a1b2c3d4"},
		{Name: "sda", SizeBytes: 480 * gib, Serial: "S1", Model: "SAMSUNG MZ7LH480", ByPath: []string{"pci-0000:00:17.0-ata-1"}},
		{Name: "sdc", SizeBytes: 480 * gib, Serial: "S3", Model: "SAMSUNG MZ7LH480", ByPath: []string{"pci-0000:00:17.0-ata-2"}},
		{Name: "sdd", SizeBytes: 16 * gib, Serial: "USB1", Removable: true, WWN: "eui.usb1"},
		{Name: "nvme0n1", SizeBytes: 1920 * gib, Serial: "N1", WWN: "eui.0025388b71b2c3d4"},
	}
	yes, no := true, false
	for _, tc := range []struct {
		name  string
		hints *metalv1.RootDeviceHints
		want  string // "" for no disk
	}{
		{"no hints: the smallest non-removable disk, by name on a tie", nil, "sda"},
		{"empty hints are no hints", &metalv1.RootDeviceHints{}, "sda"},
		{"deviceName", &metalv1.RootDeviceHints{DeviceName: "nvme0n1"}, "nvme0n1"},
		{"serialNumber", &metalv1.RootDeviceHints{SerialNumber: "S3"}, "sdc"},
		{"minimum size in GiB", &metalv1.RootDeviceHints{MinSizeGigabytes: 481}, "sdb"},
		{"the minimum is inclusive", &metalv1.RootDeviceHints{MinSizeGigabytes: 480}, "sda"},
		{"a removable disk only when named", &metalv1.RootDeviceHints{SerialNumber: "USB1"}, "sdd"},
		{"every hint must match", &metalv1.RootDeviceHints{DeviceName: "sda", SerialNumber: "S2"}, ""},
		{"no disk large enough", &metalv1.RootDeviceHints{MinSizeGigabytes: 4000}, ""},
		{"an unknown name", &metalv1.RootDeviceHints{DeviceName: "vda"}, ""},
		{"wwn", &metalv1.RootDeviceHints{WWN: "eui.0025388b71b2c3d4"}, "nvme0n1"},
		{"a removable disk named by its wwn", &metalv1.RootDeviceHints{WWN: "eui.usb1"}, "sdd"},
		{"byPath: the slot", &metalv1.RootDeviceHints{ByPath: "pci-0000:00:17.0-ata-2"}, "sdc"},
		{"rotational", &metalv1.RootDeviceHints{Rotational: &yes}, "sdb"},
		{"solid-state: the smallest, by name", &metalv1.RootDeviceHints{Rotational: &no}, "sda"},
		{"model is a substring", &metalv1.RootDeviceHints{Model: "ST1000"}, "sdb"},
		{"model and size together", &metalv1.RootDeviceHints{Model: "SAMSUNG", MinSizeGigabytes: 500}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := tc.hints.Pick(disks)
			if got := map[bool]string{true: d.Name}[ok]; got != tc.want || ok != (tc.want != "") {
				t.Fatalf("Pick = %q, %v; want %q", d.Name, ok, tc.want)
			}
		})
	}
	if _, ok := (&metalv1.RootDeviceHints{}).Pick(nil); ok {
		t.Fatal("Pick found a disk among none")
	}
}

// The API server refuses a deviceName that is a path rather than the
// kernel name status.hardware.disks shows.
func TestRootDeviceHintsDeviceNameIsAKernelName(t *testing.T) {
	ns := env.Namespace(t)
	for _, tc := range []struct {
		name, device string
		ok           bool
	}{{"kernel-name", "nvme0n1", true}, {"path", "/dev/sda", false}} {
		h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name},
			Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://rack1"}, BootMACs: []string{"52:54:00:00:00:01"},
				RootDeviceHints: &metalv1.RootDeviceHints{DeviceName: tc.device}}}
		err := env.Client.Create(context.Background(), h)
		if tc.ok && err != nil || !tc.ok && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.rootDeviceHints.deviceName")) {
			t.Errorf("deviceName %q: %v", tc.device, err)
		}
	}
}
