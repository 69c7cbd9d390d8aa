package delivery

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/configserver"
	"anvil.dev/anvil/internal/statusapply"
	"anvil.dev/anvil/pxe/index"
)

var _ configserver.InstallSource = (*Configs)(nil)

// installing reports whether the Host's provisioning boot installs its
// class's spec.image (so its boot script carries the plan URL, not the
// NoCloud seed).
func installing(h *metalv1.Host, class *metalv1.MachineClass) bool {
	return provisioning(h) && class.Spec.Image != nil
}

// installed reports whether the Host's installer reported this boot's
// image written: its script now exits to the disk, and no new credential
// may void the one the installed OS still has to use.
func installed(h *metalv1.Host) bool {
	in := h.Status.Install
	return in != nil && provisioning(h) && in.BootRequestID == h.Status.BootRequestID && in.Outcome == metalv1.InstallInstalled
}

// wipeFormat is the config format of the class's wipe boot. A class that
// installs spec.image wipes with its installer, Anvil's initramfs, which
// takes the wipe config as Ignition whatever format the installed OS reads.
func wipeFormat(class *metalv1.MachineClass) string {
	if class.Spec.Image != nil {
		return FormatButane
	}
	return class.Spec.Config.Format
}

// InstallPlan implements configserver.InstallSource: the root device by
// spec.rootDeviceHints, the class's image as Anvil serves it, and the
// NoCloud seed the installed OS reads (with the still unused credential).
func (c *Configs) InstallPlan(ctx context.Context, host bootcred.HostKey, mac, cred string, req agent.InstallRequest) (*agent.InstallPlan, error) {
	t, err := c.target(ctx, host)
	if err != nil {
		return nil, err
	}
	if !installing(t.host, t.class) {
		return nil, fmt.Errorf("host %s is not in an install boot (MachineClass %s without spec.image, or not provisioning): %w",
			host, t.classKey(), configserver.ErrNoConfig)
	}
	if f := t.class.Spec.Config.Format; f != FormatCloudInit {
		return nil, &configserver.InstallRefusal{Reason: agent.InstallSeedFailed,
			Message: fmt.Sprintf("MachineClass %s: spec.image installs need spec.config.format %q (the installed OS's cloud-init reads it), not %q", t.classKey(), FormatCloudInit, f)}
	}
	disks := make([]metalv1.Disk, 0, len(req.Disks))
	for _, d := range req.Disks {
		disks = append(disks, metalv1.Disk{Name: d.Name, SizeBytes: d.SizeBytes, Rotational: d.Rotational, Removable: d.Removable,
			Model: d.Model, Serial: d.Serial, WWN: d.WWN, ByPath: d.ByPath})
	}
	disk, ok := t.host.Spec.RootDeviceHints.Pick(disks)
	if !ok {
		msg := fmt.Sprintf("Host %s: no disk matches spec.rootDeviceHints (%s); the installer saw %s", t.host.Name, describeHints(t.host.Spec.RootDeviceHints), describeDisks(disks))
		res := agent.InstallResult{BootID: req.BootID, Outcome: agent.InstallFailed, Reason: agent.InstallNoRootDevice, Message: msg}
		if err := c.recordInstall(ctx, t.host, res); err != nil {
			return nil, err
		}
		return nil, &configserver.InstallRefusal{Reason: agent.InstallNoRootDevice, Message: msg}
	}
	base, err := baseURL(ctx, c.o.BaseURL)
	if err != nil {
		return nil, err
	}
	img := *t.class.Spec.Image
	return &agent.InstallPlan{
		Device:  disk.Name,
		Image:   agent.InstallImage{URL: base + index.ArtifactURLPrefix + index.ImagePath(t.classKey(), img), SHA256: img.SHA256},
		SeedURL: configserver.NoCloudSeedURL(base+configserver.DefaultPathPrefix, mac, cred),
	}, nil
}

// InstallResult implements configserver.InstallSource.
func (c *Configs) InstallResult(ctx context.Context, host bootcred.HostKey, mac string, res agent.InstallResult) error {
	t, err := c.target(ctx, host)
	if err != nil {
		return err
	}
	if !installing(t.host, t.class) {
		return fmt.Errorf("host %s is not in an install boot: %w", host, configserver.ErrNoConfig)
	}
	return c.recordInstall(ctx, t.host, res)
}

// recordInstall writes status.install and the Installed condition (SSA,
// field manager anvil-install). The first outcome of a boot stands: a
// retried post changes nothing, a late one cannot undo it. h comes from the
// cache, which may not have seen the first outcome yet: the write is a
// compare-and-swap on h's resourceVersion, and after a conflict the Host
// is read again around the cache and checked again.
func (c *Configs) recordInstall(ctx context.Context, h *metalv1.Host, res agent.InstallResult) error {
	if c.o.Writer == nil {
		return fmt.Errorf("delivery: no status writer for install results")
	}
	boot := h.Status.BootRequestID
	first := true
	var recorded *metalv1.HostInstall
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first { // a conflict: read the Host as it is now
			fresh := &metalv1.Host{}
			if err := c.o.APIReader.Get(ctx, client.ObjectKeyFromObject(h), fresh); err != nil {
				return err
			}
			h = fresh
		}
		first = false
		if h.Status.BootRequestID != boot {
			return fmt.Errorf("host %s/%s: boot %s is over: %w", h.Namespace, h.Name, boot, configserver.ErrNoConfig)
		}
		if cur := h.Status.Install; cur != nil && cur.BootRequestID == boot {
			return nil
		}
		in, err := c.applyInstall(ctx, h, res)
		if err == nil {
			recorded = &in
		}
		return err
	})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("host %s/%s is gone: %w", h.Namespace, h.Name, configserver.ErrNoConfig)
	}
	if err != nil {
		return fmt.Errorf("recording the install result on Host %s/%s: %w", h.Namespace, h.Name, err)
	}
	if recorded != nil {
		c.logger(ctx).Info("install recorded", "host", h.Namespace+"/"+h.Name, "bootRequest", boot, "outcome", recorded.Outcome, "reason", recorded.Reason, "device", recorded.Device)
	}
	return nil
}

// applyInstall writes res as the outcome of h's boot, if h is still at its
// resourceVersion; it returns what it wrote.
func (c *Configs) applyInstall(ctx context.Context, h *metalv1.Host, res agent.InstallResult) (metalv1.HostInstall, error) {
	boot := h.Status.BootRequestID
	now := metav1.NewTime(c.o.Now().UTC().Truncate(time.Second))
	in := metalv1.HostInstall{
		BootRequestID: boot, Outcome: metalv1.InstallOutcome(res.Outcome), Reason: metalv1.InstallFailureReason(res.Reason),
		Message: truncate(res.Message, 2048), Device: res.Device, ImageSHA256: res.SHA256, BytesWritten: res.BytesWritten, FinishedAt: now,
	}
	cond := metav1.Condition{Type: metalv1.ConditionInstalled, Status: metav1.ConditionTrue, Reason: string(metalv1.InstallInstalled), ObservedGeneration: h.Generation,
		Message: fmt.Sprintf("boot %s: image %s written to %s (%d bytes); booting from disk", boot, shortSum(res.SHA256), res.Device, res.BytesWritten)}
	if in.Outcome != metalv1.InstallInstalled {
		cond.Status, cond.Reason = metav1.ConditionFalse, string(in.Reason)
		cond.Message = truncate(fmt.Sprintf("boot %s: %s", boot, res.Message), 1000)
	}
	live := h.DeepCopy()
	meta.SetStatusCondition(&live.Status.Conditions, cond)
	_, err := statusapply.Install.Apply(ctx, c.o.Writer, statusapply.Request{
		Live: live, GVK: statusapply.HostGVK, ResourceVersion: h.ResourceVersion,
		Status: map[string]any{"install": in, "conditions": []metav1.Condition{*meta.FindStatusCondition(live.Status.Conditions, metalv1.ConditionInstalled)}},
	})
	return in, err
}

func describeHints(h *metalv1.RootDeviceHints) string {
	if h == nil {
		return "none set: the smallest non-removable disk"
	}
	var parts []string
	if h.DeviceName != "" {
		parts = append(parts, "deviceName="+h.DeviceName)
	}
	if h.SerialNumber != "" {
		parts = append(parts, "serialNumber="+h.SerialNumber)
	}
	if h.MinSizeGigabytes > 0 {
		parts = append(parts, fmt.Sprintf("minSizeGigabytes=%d", h.MinSizeGigabytes))
	}
	for k, v := range map[string]string{"wwn": h.WWN, "byPath": h.ByPath, "model": h.Model} {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	if h.Rotational != nil {
		parts = append(parts, fmt.Sprintf("rotational=%t", *h.Rotational))
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return "none set: the smallest non-removable disk"
	}
	return strings.Join(parts, ", ")
}

func describeDisks(ds []metalv1.Disk) string {
	if len(ds) == 0 {
		return "no disks"
	}
	var parts []string
	for i, d := range ds {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ds)-i))
			break
		}
		s := fmt.Sprintf("%s %.1f GiB", d.Name, float64(d.SizeBytes)/(1<<30))
		if d.Serial != "" {
			s += " serial " + d.Serial
		}
		if d.WWN != "" {
			s += " wwn " + d.WWN
		}
		if d.Rotational {
			s += " rotational"
		}
		if d.Removable {
			s += " removable"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func shortSum(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
