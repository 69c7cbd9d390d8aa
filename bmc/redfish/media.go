package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"anvil.dev/anvil/bmc"
)

// Virtual media (bmc.VirtualMedia). The Redfish spec puts the
// VirtualMediaCollection under the ComputerSystem (VirtualMedia v1.x with
// ComputerSystem v1.13+, and DMTF's public-rackmount1 mockup); older
// specs, and iDRAC, iLO and Supermicro firmware, put it under the Manager
// (deprecated there since). The driver looks at the system first, then at
// the managers in its Links.ManagedBy, and takes the first member whose
// MediaTypes include CD (or else DVD).
//
// InsertMedia and EjectMedia use the #VirtualMedia.InsertMedia and
// #VirtualMedia.EjectMedia actions (VirtualMedia v1.2+): Image, Inserted
// and WriteProtected, plus TransferMethod "Stream" and TransferProtocolType
// HTTP or HTTPS only where the BMC advertises them (an
// @Redfish.AllowableValues annotation on the action or its ActionInfo),
// because BMCs older than VirtualMedia v1.3 refuse parameters they do not
// know. Without the actions (older BMCs), the driver PATCHes Image and
// Inserted on the member instead.

var _ bmc.VirtualMedia = (*Driver)(nil)

// vmAction is an InsertMedia or EjectMedia action of a VirtualMedia member.
type vmAction struct {
	Target     string   `json:"target"`
	ActionInfo string   `json:"@Redfish.ActionInfo"`
	Methods    []string `json:"TransferMethod@Redfish.AllowableValues"`
	Protocols  []string `json:"TransferProtocolType@Redfish.AllowableValues"`
}

// vmDevice is a VirtualMedia member, as far as the driver reads it.
type vmDevice struct {
	MediaTypes     []string
	Image          *string
	Inserted       *bool
	WriteProtected *bool
	Actions        struct {
		Insert vmAction `json:"#VirtualMedia.InsertMedia"`
		Eject  vmAction `json:"#VirtualMedia.EjectMedia"`
	}

	path string // @odata.id as requested
	etag string
}

func (v *vmDevice) image() string {
	if v.Image == nil {
		return ""
	}
	return *v.Image
}

// inserted is Inserted, or (for BMCs that omit it) whether there is an
// image.
func (v *vmDevice) inserted() bool {
	if v.Inserted != nil {
		return *v.Inserted
	}
	return v.image() != ""
}

func (v *vmDevice) state() bmc.MediaState {
	st := bmc.MediaState{Device: v.path, Inserted: v.inserted(), Image: v.image()}
	if v.WriteProtected != nil {
		st.WriteProtected = *v.WriteProtected
	}
	return st
}

// isCD tells whether the member takes CD (2) or DVD (1) images; 0 when
// neither.
func (v *vmDevice) isCD() int {
	switch {
	case slices.Contains(v.MediaTypes, string(schemas.CDVirtualMediaType)):
		return 2
	case slices.Contains(v.MediaTypes, string(schemas.DVDVirtualMediaType)):
		return 1
	}
	return 0
}

// getDoc GETs path and decodes it into v; it returns the ETag.
func getDoc(api *gofish.APIClient, path string, v any) (string, error) {
	resp, err := api.Get(path)
	if err != nil {
		return "", err
	}
	defer drain(resp)
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return "", fmt.Errorf("decode %s: %w", path, err)
	}
	return resp.Header.Get("ETag"), nil
}

func isNotFound(err error) bool {
	var re *schemas.Error
	return errors.As(err, &re) && re.HTTPReturnedStatusCode == http.StatusNotFound
}

// readDevice GETs one VirtualMedia member.
func readDevice(api *gofish.APIClient, path string) (*vmDevice, error) {
	dev := &vmDevice{path: path}
	etag, err := getDoc(api, path, dev)
	if err != nil {
		return nil, err
	}
	dev.etag = etag
	return dev, nil
}

// cd finds the system's virtual CD (cached after the first discovery; a
// cached device that is gone is looked up again). op is for errors.
func (d *Driver) cd(ctx context.Context, op string) (*gofish.APIClient, *vmDevice, error) {
	api, sysPath, err := d.connect(ctx)
	if err != nil {
		return nil, nil, d.fail(op, err)
	}
	d.mu.Lock()
	cached := d.mediaPath
	d.mu.Unlock()
	if cached != "" {
		dev, err := readDevice(api, cached)
		if err == nil {
			return api, dev, nil
		}
		if !isNotFound(err) {
			return nil, nil, d.fail(op, err)
		}
	}
	dev, err := d.findCD(api, sysPath, op)
	if err != nil {
		return nil, nil, err
	}
	d.mu.Lock()
	d.mediaPath = dev.path
	d.mu.Unlock()
	return api, dev, nil
}

// findCD discovers the virtual CD: the system's VirtualMedia collection,
// then its managers'.
func (d *Driver) findCD(api *gofish.APIClient, sysPath, op string) (*vmDevice, error) {
	var sys struct {
		VirtualMedia odataLink
		Links        struct{ ManagedBy []odataLink }
	}
	if _, err := getDoc(api, sysPath, &sys); err != nil {
		return nil, d.fail(op, d.systemErr(sysPath, err))
	}
	var collections []string
	if sys.VirtualMedia.ID != "" {
		collections = append(collections, strings.TrimRight(sys.VirtualMedia.ID, "/"))
	}
	var seen []string // media types of the members that were not CDs
	var best *vmDevice
	try := func(coll string) error {
		ids, err := d.members(api, coll)
		if isNotFound(err) {
			return nil // advertised but absent (an unlicensed feature)
		}
		if err != nil {
			return err
		}
		for _, id := range ids {
			dev, err := readDevice(api, id)
			if err != nil {
				return err
			}
			if best == nil || dev.isCD() > best.isCD() {
				best = dev
			}
			if dev.isCD() == 0 {
				seen = append(seen, fmt.Sprintf("%s %v", id, dev.MediaTypes))
			}
		}
		return nil
	}
	for _, coll := range collections {
		if err := try(coll); err != nil {
			return nil, d.fail(op, err)
		}
	}
	if best == nil || best.isCD() == 0 {
		for _, m := range sys.Links.ManagedBy {
			if m.ID == "" {
				continue
			}
			var mgr struct{ VirtualMedia odataLink }
			if _, err := getDoc(api, strings.TrimRight(m.ID, "/"), &mgr); err != nil {
				return nil, d.fail(op, err)
			}
			if mgr.VirtualMedia.ID == "" {
				continue
			}
			coll := strings.TrimRight(mgr.VirtualMedia.ID, "/")
			collections = append(collections, coll)
			if err := try(coll); err != nil {
				return nil, d.fail(op, err)
			}
			if best != nil && best.isCD() > 0 {
				break
			}
		}
	}
	switch {
	case best != nil && best.isCD() > 0:
		return best, nil
	case len(collections) == 0:
		return nil, bmc.NoVirtualMedia(op, d.addr, fmt.Sprintf(
			"neither the system %s nor its managers link a VirtualMedia collection; boot such a Host with boot method PXE", sysPath))
	default:
		what := "no members"
		if len(seen) > 0 {
			what = "only " + strings.Join(seen, ", ")
		}
		return nil, bmc.NoVirtualMedia(op, d.addr, fmt.Sprintf(
			"the virtual media (%s) have no CD or DVD device: %s", strings.Join(collections, ", "), what))
	}
}

// MediaState implements bmc.VirtualMedia.
func (d *Driver) MediaState(ctx context.Context) (bmc.MediaState, error) {
	ctx, cancel := d.callCtx(ctx)
	defer cancel()
	_, dev, err := d.cd(ctx, "read virtual media")
	if err != nil {
		return bmc.MediaState{}, err
	}
	return dev.state(), nil
}

// InsertMedia implements bmc.VirtualMedia.
func (d *Driver) InsertMedia(ctx context.Context, imageURL string) error {
	const op = "insert virtual media"
	if err := bmc.CheckImageURL(imageURL); err != nil {
		return &bmc.Error{Op: op, Address: d.addr, Err: err}
	}
	ctx, cancel := d.callCtx(ctx)
	defer cancel()
	api, dev, err := d.cd(ctx, op)
	if err != nil {
		return err
	}
	if dev.inserted() || dev.image() != "" {
		if dev.inserted() && dev.image() == imageURL {
			return nil
		}
		return &bmc.Error{Op: op, Address: d.addr,
			Err: fmt.Errorf("%w: the virtual CD %s holds an image; eject it first", bmc.ErrMediaInserted, dev.path)}
	}
	act := dev.Actions.Insert
	if act.Target == "" {
		body := map[string]any{"Image": imageURL, "Inserted": true}
		if dev.WriteProtected != nil {
			body["WriteProtected"] = true
		}
		return bmc.Redact(d.patchDevice(api, dev, op+" (PATCH)", body), imageURL)
	}
	params := map[string]any{"Image": imageURL, "Inserted": true, "WriteProtected": true}
	methods, protocols, known := act.Methods, act.Protocols, []string(nil)
	if act.ActionInfo != "" {
		if info, err := schemas.GetObject[schemas.ActionInfo](api, act.ActionInfo); err != nil {
			d.opts.Log(ctx).V(1).Info("cannot read the InsertMedia ActionInfo", "address", d.addr, "error", err.Error())
		} else {
			for _, p := range info.Parameters {
				known = append(known, p.Name)
				switch p.Name {
				case "TransferMethod":
					methods = append(methods, p.AllowableValues...)
				case "TransferProtocolType":
					protocols = append(protocols, p.AllowableValues...)
				}
			}
		}
	}
	if slices.Contains(methods, string(schemas.StreamTransferMethod)) {
		params["TransferMethod"] = string(schemas.StreamTransferMethod)
	}
	if u, err := url.Parse(imageURL); err == nil && slices.Contains(protocols, strings.ToUpper(u.Scheme)) {
		params["TransferProtocolType"] = strings.ToUpper(u.Scheme)
	}
	if known != nil {
		// The ActionInfo lists what this BMC takes: leave out the
		// optional parameters it does not.
		for k := range params {
			if k != "Image" && !slices.Contains(known, k) {
				delete(params, k)
			}
		}
	}
	resp, err := api.Post(act.Target, params)
	if err != nil {
		// BMC messages quote parameter values: keep the (one-time) URL out.
		return bmc.Redact(d.fail(op, err), imageURL)
	}
	drain(resp)
	return nil
}

// EjectMedia implements bmc.VirtualMedia.
func (d *Driver) EjectMedia(ctx context.Context) error {
	const op = "eject virtual media"
	ctx, cancel := d.callCtx(ctx)
	defer cancel()
	api, dev, err := d.cd(ctx, op)
	if err != nil {
		return err
	}
	if !dev.inserted() && dev.image() == "" {
		return nil
	}
	if dev.Actions.Eject.Target == "" {
		return d.patchDevice(api, dev, op+" (PATCH)", map[string]any{"Image": nil, "Inserted": false})
	}
	resp, err := api.Post(dev.Actions.Eject.Target, map[string]any{})
	if err != nil {
		return d.fail(op, err)
	}
	drain(resp)
	return nil
}

// patchDevice PATCHes a VirtualMedia member (BMCs without the actions),
// with If-Match when the BMC sent an ETag.
func (d *Driver) patchDevice(api *gofish.APIClient, dev *vmDevice, op string, body map[string]any) error {
	var headers map[string]string
	if dev.etag != "" {
		headers = map[string]string{"If-Match": dev.etag}
	}
	resp, err := api.PatchWithHeaders(dev.path, body, headers)
	if err != nil {
		return d.fail(op, err)
	}
	drain(resp)
	return nil
}
