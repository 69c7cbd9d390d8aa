package bmc

import (
	"context"
	"errors"
	"fmt"
	"net/url"
)

// VirtualMedia is the optional capability of a driver whose BMC can attach
// a remote image as a virtual CD (Redfish VirtualMedia). Boot from it with
// SetBootOnce(BootCD). Use VirtualMediaOf (or the Pool methods) rather than
// a type assertion: it turns a driver without the capability into the
// typed error.
//
// A driver that implements it may still find, at run time, that its BMC
// has no virtual media (or no CD/DVD device): every method then fails with
// an *Error of kind ErrUnsupported that also matches ErrNoVirtualMedia.
type VirtualMedia interface {
	// InsertMedia attaches the image at imageURL (http:// or https://) to
	// the BMC's virtual CD, read only, and marks it inserted. The BMC
	// fetches the image itself. Inserting the image that is already in is
	// a no-op; another image in the drive fails with ErrMediaInserted
	// (eject it first).
	InsertMedia(ctx context.Context, imageURL string) error
	// EjectMedia detaches whatever is in the virtual CD. An empty drive is
	// a no-op.
	EjectMedia(ctx context.Context) error
	// MediaState reads the virtual CD's state. It is also the cheapest
	// probe for the capability.
	MediaState(ctx context.Context) (MediaState, error)
}

// MediaState is what a BMC reports about its virtual CD.
type MediaState struct {
	// Device names the BMC's virtual CD device, e.g. the Redfish path
	// /redfish/v1/Managers/1/VirtualMedia/CD1.
	Device string
	// Inserted is true when an image is attached and visible to the host.
	Inserted bool
	// Image is the URL of the attached image as the BMC reports it ("" when
	// none). It may be a one-time URL: do not log it.
	Image string
	// WriteProtected is the BMC's write protection of the medium.
	WriteProtected bool
}

var (
	// ErrNoVirtualMedia: the BMC (or its driver) has no virtual CD. It
	// comes with kind ErrUnsupported; test with errors.Is.
	ErrNoVirtualMedia = errors.New("no virtual media")
	// ErrMediaInserted: InsertMedia found another image in the virtual CD.
	ErrMediaInserted = errors.New("virtual media already holds another image")
)

// NoVirtualMedia returns the typed error of a BMC without virtual media:
// kind ErrUnsupported, matching ErrNoVirtualMedia, with why (what is
// missing and what to do) in the message.
func NoVirtualMedia(op, address, why string) error {
	return &Error{Kind: ErrUnsupported, Op: op, Address: address, Err: fmt.Errorf("%w: %s", ErrNoVirtualMedia, why)}
}

// noVirtualMediaWhy explains, per scheme, why a driver has no virtual media.
func noVirtualMediaWhy(scheme string) string {
	switch scheme {
	case "ipmi":
		return "IPMI has no standard virtual media; give the Host a redfish+https:// BMC address or use boot method PXE"
	case "manual":
		return "a manual:// Host has no BMC for Anvil to drive; use boot method PXE (or attach the image by hand)"
	}
	return "the " + scheme + " driver does not implement virtual media"
}

// VirtualMediaOf returns d's virtual media capability, or the typed error
// (ErrUnsupported, ErrNoVirtualMedia) naming the address when the driver
// has none. address is the BMC address, for the message.
func VirtualMediaOf(d Driver, address string) (VirtualMedia, error) {
	if vm, ok := d.(VirtualMedia); ok {
		return vm, nil
	}
	scheme := "this"
	if a, err := ParseAddress(address); err == nil {
		scheme, address = a.Scheme, a.String()
	}
	return nil, NoVirtualMedia("virtual media", address, noVirtualMediaWhy(scheme))
}

// CheckImageURL checks an image URL for InsertMedia: absolute http or
// https, with a host and no user information (credentials for the image
// server would end up in the BMC's state). Errors do not repeat the URL,
// which may be a one-time URL.
func CheckImageURL(imageURL string) error {
	u, err := url.Parse(imageURL)
	switch {
	case imageURL == "":
		return errors.New("the image URL is empty")
	case err != nil:
		return errors.New("the image URL does not parse")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("the image URL must be http:// or https://, not %q", u.Scheme)
	case u.Host == "":
		return errors.New("the image URL has no host")
	case u.User != nil:
		return errors.New("the image URL must not carry user information")
	}
	return nil
}

// InsertMedia attaches an image to the BMC's virtual CD through the pool.
func (p *Pool) InsertMedia(ctx context.Context, opts Options, imageURL string) error {
	return p.Do(ctx, opts, func(ctx context.Context, d Driver) error {
		vm, err := VirtualMediaOf(d, opts.Address)
		if err != nil {
			return err
		}
		return vm.InsertMedia(ctx, imageURL)
	})
}

// EjectMedia empties the BMC's virtual CD through the pool.
func (p *Pool) EjectMedia(ctx context.Context, opts Options) error {
	return p.Do(ctx, opts, func(ctx context.Context, d Driver) error {
		vm, err := VirtualMediaOf(d, opts.Address)
		if err != nil {
			return err
		}
		return vm.EjectMedia(ctx)
	})
}

// MediaState reads the BMC's virtual CD through the pool.
func (p *Pool) MediaState(ctx context.Context, opts Options) (MediaState, error) {
	var st MediaState
	err := p.Do(ctx, opts, func(ctx context.Context, d Driver) error {
		vm, err := VirtualMediaOf(d, opts.Address)
		if err != nil {
			return err
		}
		st, err = vm.MediaState(ctx)
		return err
	})
	return st, err
}
