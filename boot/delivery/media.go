package delivery

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/media"
	"anvil.dev/anvil/pxe/httpboot"
)

// IndexMediaTokenHash indexes Hosts by status.virtualMedia.tokenHash.
const IndexMediaTokenHash = "status.virtualMedia.tokenHash"

// AddMediaIndex registers IndexMediaTokenHash with the manager's cache.
func AddMediaIndex(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &metalv1.Host{}, IndexMediaTokenHash, func(o client.Object) []string {
		if h, ok := o.(*metalv1.Host); ok && h.Status.VirtualMedia != nil && h.Status.VirtualMedia.TokenHash != "" {
			return []string{h.Status.VirtualMedia.TokenHash}
		}
		return nil
	})
}

// MediaSource is the media.Source of a spec.bootMethod VirtualMedia Host:
// the Host whose status.virtualMedia (the Host controller's) names the
// token hash, while that boot is still to happen. Its script is the one the
// PXE path serves the boot MAC, asked from the Host's static address, so
// the boot credential in it is bound to that address as today.
type MediaSource struct {
	// Reader has IndexMediaTokenHash (AddMediaIndex); the manager's cache.
	Reader  client.Reader
	Scripts httpboot.ScriptSource
}

// Boot implements media.Source.
func (m MediaSource) Boot(ctx context.Context, hash string) (media.Boot, error) {
	var hosts metalv1.HostList
	if err := m.Reader.List(ctx, &hosts, client.MatchingFields{IndexMediaTokenHash: hash}); err != nil {
		return media.Boot{}, fmt.Errorf("hosts by media token hash: %w", err)
	}
	for i := range hosts.Items {
		h := &hosts.Items[i]
		n, ok := MediaBoot(h, hash)
		if !ok {
			continue
		}
		return media.Boot{
			Key: fmt.Sprintf("%s/%s boot %s", h.Namespace, h.Name, h.Status.VirtualMedia.BootRequestID),
			Net: n,
			Script: func(ctx context.Context, remote netip.AddrPort) ([]byte, error) {
				// The PXE path's rules, binding included: only the
				// static address gets the credential.
				return m.Scripts.Script(ctx, httpboot.ScriptRequest{MAC: n.MAC, RemoteAddr: remote})
			},
		}, nil
	}
	return media.Boot{}, media.ErrNoBoot
}

// MediaBoot says whether h's virtual media boot with token hash is still
// to happen, and its boot NIC's network: the Host boots by VirtualMedia,
// status.virtualMedia names the hash and the current boot request
// (spec.bootRequest), the ISO is not ejected, and that
// boot's credential is unused. Anything else ends the URL.
func MediaBoot(h *metalv1.Host, hash string) (media.Net, bool) {
	vm := h.Status.VirtualMedia
	switch {
	// status.bootRequestID may still be the previous one: the BMC may
	// fetch the ISO when it is inserted, before the boot is acknowledged.
	case h.Spec.BootMethod != metalv1.BootMethodVirtualMedia, vm == nil, hash == "", vm.TokenHash != hash, vm.EjectedAt != nil,
		h.Spec.BootRequest == nil, h.Spec.BootRequest.ID != vm.BootRequestID,
		len(h.Spec.BootMACs) == 0, h.Spec.Network == nil:
		return media.Net{}, false
	}
	if c := h.Status.BootCredential; c != nil && c.BootRequestID == vm.BootRequestID && c.ConsumedAt != nil {
		return media.Net{}, false
	}
	mac, err := net.ParseMAC(h.Spec.BootMACs[0])
	if err != nil {
		return media.Net{}, false
	}
	addr, err := netip.ParsePrefix(h.Spec.Network.Address)
	if err != nil {
		return media.Net{}, false
	}
	n := media.Net{MAC: mac, Address: addr, Hostname: h.Spec.Network.Hostname}
	if gw, err := netip.ParseAddr(h.Spec.Network.Gateway); err == nil {
		n.Gateway = gw
	}
	for _, d := range h.Spec.Network.DNS {
		if a, err := netip.ParseAddr(d); err == nil {
			n.DNS = append(n.DNS, a)
		}
	}
	return n, true
}

// lazyMediaSource is a MediaSource whose Scripts netboot creates later
// (Wiring.Scripts runs before Wiring.HTTPHook mounts the handler).
type lazyMediaSource struct {
	reader  client.Reader
	scripts **Scripts
}

func (l *lazyMediaSource) Boot(ctx context.Context, hash string) (media.Boot, error) {
	if *l.scripts == nil {
		return media.Boot{}, fmt.Errorf("delivery: virtual media: no boot scripts (netboot did not call Wiring.Scripts)")
	}
	return MediaSource{Reader: l.reader, Scripts: *l.scripts}.Boot(ctx, hash)
}
