package index

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,namespace=anvil-system,resources=hosts,verbs=create,roleName=anvil-pxe-discovery

// Discovery labels and annotations.
const (
	// LabelDiscovered marks Hosts created by PXE discovery.
	LabelDiscovered = "metal.anvil.dev/discovered"
	// AnnotationVendorClass records the DHCP vendor class the host sent.
	AnnotationVendorClass = "metal.anvil.dev/discovered-vendor-class"
	// DiscoveredNamePrefix starts the name of every discovered Host.
	DiscoveredNamePrefix = "discovered-"
)

// DiscovererOptions configures a Discoverer.
type DiscovererOptions struct {
	// Client creates the Hosts. Required.
	Client client.Client
	// Namespace the Hosts are created in. Required.
	Namespace string
	// Index, if set, is checked first: a MAC that any Host lists already
	// creates nothing.
	Index *Index
	// Timeout bounds one create. Default 10s.
	Timeout time.Duration
	Logger  logr.Logger
}

// Discoverer turns DHCP discovery reports (dhcp.DiscoveryOptions.OnDiscover,
// which the dhcp package deduplicates and rate-limits) into Host objects an
// administrator can accept by adding a BMC.
type Discoverer struct {
	opts DiscovererOptions
	log  logr.Logger
}

// NewDiscoverer validates opts.
func NewDiscoverer(opts DiscovererOptions) (*Discoverer, error) {
	if opts.Client == nil || opts.Namespace == "" {
		return nil, errors.New("index: DiscovererOptions needs Client and Namespace")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	return &Discoverer{opts: opts, log: opts.Logger.WithName("discovery")}, nil
}

// DiscoveredHostName is the name of the Host discovery creates for mac:
// discovered-<12 lower-case hex digits>.
func DiscoveredHostName(mac net.HardwareAddr) string {
	return DiscoveredNamePrefix + strings.ReplaceAll(pxe.MACKey(mac), ":", "")
}

// OnDiscover has the signature of dhcp.DiscoveryOptions.OnDiscover.
func (d *Discoverer) OnDiscover(mac net.HardwareAddr, arch pxe.Arch, vendorClass string) {
	ctx, cancel := context.WithTimeout(context.Background(), d.opts.Timeout)
	defer cancel()
	if _, err := d.Discover(ctx, mac, arch, vendorClass); err != nil {
		d.log.Error(err, "creating a Host for a discovered MAC", "mac", pxe.MACKey(mac))
	}
}

// Discover creates the Host for an unknown MAC: spec.bootMACs=[mac], no BMC
// (so the Host controller puts it in state Discovered, and the index never
// accepts it), the architecture and boot mode the DHCP request announced,
// and the label metal.anvil.dev/discovered=true. It reports whether it
// created one; an existing Host (of that name, or listing the MAC) is not
// an error.
func (d *Discoverer) Discover(ctx context.Context, mac net.HardwareAddr, arch pxe.Arch, vendorClass string) (bool, error) {
	if len(mac) != 6 {
		return false, errors.New("index: discovery needs a 48-bit MAC")
	}
	if d.opts.Index != nil && d.opts.Index.Known(mac) {
		return false, nil
	}
	h := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{
			Name:      DiscoveredHostName(mac),
			Namespace: d.opts.Namespace,
			Labels:    map[string]string{LabelDiscovered: "true"},
		},
		Spec: metalv1.HostSpec{BootMACs: []string{pxe.MACKey(mac)}},
	}
	if vc := vendorClass; vc != "" {
		if len(vc) > 255 {
			vc = vc[:255]
		}
		h.Annotations = map[string]string{AnnotationVendorClass: strings.ToValidUTF8(vc, "?")}
	}
	switch arch.CPU() {
	case "amd64":
		h.Spec.Architecture = "x86_64"
	case "arm64":
		h.Spec.Architecture = "aarch64"
	}
	if arch != pxe.ArchUnknown {
		h.Spec.BootMode = "Legacy"
		if arch.UEFI() {
			h.Spec.BootMode = "UEFI"
		}
	}
	err := d.opts.Client.Create(ctx, h)
	switch {
	case apierrors.IsAlreadyExists(err):
		return false, nil
	case err != nil:
		return false, err
	}
	d.log.Info("created a Host for a MAC seen on the network; add its BMC to accept it",
		"host", h.Namespace+"/"+h.Name, "mac", pxe.MACKey(mac), "arch", string(arch))
	return true, nil
}
