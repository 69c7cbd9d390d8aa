package redfishsim

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
)

// Virtual media. The mockup's system has a VirtualMediaCollection with a
// CD (MediaTypes CD, DVD) and a removable drive (Floppy, USBStick); every
// simulated system serves its own copy, with live state, at
// Systems/<id>/VirtualMedia (the place the current Redfish spec gives it)
// or, with VirtualMediaOptions.UnderManager, at Managers/<id>/VirtualMedia
// (where iDRAC, iLO and Supermicro serve it). Devices start empty (the
// mockup shows example images inserted). InsertMedia and EjectMedia are
// validated as a BMC does; an older BMC's PATCH of Image and Inserted
// instead of the actions, and one without TransferMethod, are options.

// VirtualMediaOptions shape the simulated BMC's virtual media.
type VirtualMediaOptions struct {
	// Disabled serves no virtual media at all: a BMC without the feature
	// (or its licence).
	Disabled bool
	// UnderManager serves the collection at Managers/<id>/VirtualMedia
	// (linked from the Manager, not from the system) as iDRAC, iLO and
	// Supermicro do. It needs exactly one system.
	UnderManager bool
	// NoActions hides #VirtualMedia.InsertMedia and EjectMedia (VirtualMedia
	// before v1.2): clients PATCH Image and Inserted on the device instead.
	NoActions bool
	// NoTransferMethod models VirtualMedia before v1.3: InsertMedia
	// advertises no TransferMethod or TransferProtocolType and refuses them
	// as unknown parameters.
	NoTransferMethod bool
}

// MediaState is one virtual media device's state.
type MediaState struct {
	// Device is the device's Id, e.g. "CD1".
	Device     string
	MediaTypes []string
	Inserted   bool
	// Image is the inserted image URL ("" when empty).
	Image          string
	WriteProtected bool
	// TransferMethod the client asked for ("" when it sent none).
	TransferMethod string
}

// MediaEvent is an insert or eject.
type MediaEvent struct {
	SystemID string
	MediaState
}

type mediaDev struct {
	MediaState
}

const (
	insertAction = "VirtualMedia.InsertMedia"
	ejectAction  = "VirtualMedia.EjectMedia"
	mediaRel     = "/VirtualMedia" // the template's collection, relative to the system
)

// setupMedia prepares the template's VirtualMedia (or removes it) and
// gives every system its devices. It runs after setupSystems.
func (s *Server) setupMedia() error {
	vo := s.opts.VirtualMedia
	coll := s.tmpl.docs[mediaRel]
	sysDoc := s.tmpl.docs[""]
	if coll == nil || vo.Disabled {
		delete(sysDoc, "VirtualMedia")
		for rel := range s.tmpl.docs {
			if rel == mediaRel || strings.HasPrefix(rel, mediaRel+"/") {
				delete(s.tmpl.docs, rel)
			}
		}
		return nil
	}
	var devs []*mediaDev
	for _, m := range memberIDs(coll) {
		doc := s.tmpl.docs[strings.TrimPrefix(m, s.tmpl.base)]
		if doc == nil {
			return fmt.Errorf("redfishsim: mockup lacks the virtual media %s", m)
		}
		id, _ := doc["Id"].(string)
		devs = append(devs, &mediaDev{MediaState{Device: id, MediaTypes: stringList(doc["MediaTypes"])}})
	}
	for _, sys := range s.systems {
		for _, d := range devs {
			c := *d
			c.MediaTypes = slices.Clone(d.MediaTypes)
			sys.media = append(sys.media, &c)
		}
	}
	if !vo.UnderManager {
		return nil
	}
	if len(s.systems) != 1 {
		return errors.New("redfishsim: VirtualMedia.UnderManager needs exactly one system (the Manager's media belong to the systems it manages)")
	}
	links, _ := sysDoc["Links"].(map[string]any)
	managedBy, _ := links["ManagedBy"].([]any)
	var mgr string
	if len(managedBy) > 0 {
		if l, ok := managedBy[0].(map[string]any); ok {
			mgr, _ = l["@odata.id"].(string)
		}
	}
	mgr = strings.TrimRight(mgr, "/")
	if s.mock.docs[mgr] == nil {
		return errors.New("redfishsim: VirtualMedia.UnderManager: the mockup's system has no Links.ManagedBy Manager")
	}
	delete(sysDoc, "VirtualMedia")
	s.mgrMedia = mgr + mediaRel
	s.mock.docs[mgr]["VirtualMedia"] = map[string]any{"@odata.id": s.mgrMedia}
	return nil
}

// mediaBase is where sys serves its VirtualMedia collection.
func (s *Server) mediaBase(sys *system) string {
	if s.mgrMedia != "" {
		return s.mgrMedia
	}
	return sys.path + mediaRel
}

// renderMedia copies the template resource at rel (below the system) with
// its links rewritten to where sys serves its media.
func (s *Server) renderMedia(sys *system, rel string) (map[string]any, bool) {
	t := s.tmpl.docs[rel]
	if t == nil {
		return nil, false
	}
	from, to := s.tmpl.base+mediaRel, s.mediaBase(sys)
	return deepCopy(t, func(v string) string {
		if v == from || strings.HasPrefix(v, from+"/") || strings.HasPrefix(v, from+"#") {
			return to + strings.TrimPrefix(v, from)
		}
		return v
	}).(map[string]any), true
}

func (sys *system) mediaDevice(id string) *mediaDev {
	for _, d := range sys.media {
		if d.Device == id {
			return d
		}
	}
	return nil
}

// serveMedia serves sub (below the collection) of sys's virtual media.
func (s *Server) serveMedia(w http.ResponseWriter, r *http.Request, sys *system, sub string) {
	id, rest, _ := strings.Cut(strings.TrimPrefix(sub, "/"), "/")
	dev := sys.mediaDevice(id)
	switch {
	case sub == "":
		if s.allow(w, r, "GET", "HEAD") {
			doc, _ := s.renderMedia(sys, mediaRel)
			s.serveDoc(w, doc)
		}
		return
	case dev != nil && rest == "":
		methods := []string{"GET", "HEAD"}
		if s.opts.VirtualMedia.NoActions {
			methods = append(methods, "PATCH")
		}
		if !s.allow(w, r, methods...) {
			return
		}
		if r.Method == http.MethodPatch {
			s.patchMedia(w, r, sys, dev)
			return
		}
		s.serveDoc(w, s.mediaDoc(sys, dev))
		return
	case dev != nil && !s.opts.VirtualMedia.NoActions && (rest == "Actions/"+insertAction || rest == "Actions/"+ejectAction):
		if !s.allow(w, r, "POST") {
			return
		}
		if rest == "Actions/"+insertAction {
			s.insertMedia(w, r, sys, dev)
		} else {
			s.ejectMedia(w, r, sys, dev)
		}
		return
	}
	if doc, ok := s.renderMedia(sys, mediaRel+sub); ok {
		if s.allow(w, r, "GET", "HEAD") {
			s.serveDoc(w, doc)
		}
		return
	}
	writeError(w, http.StatusNotFound, s.reg.msg("ResourceMissingAtURI", nil, r.URL.Path))
}

// mediaDoc renders a device with its live state.
func (s *Server) mediaDoc(sys *system, dev *mediaDev) map[string]any {
	doc, _ := s.renderMedia(sys, mediaRel+"/"+dev.Device)
	vo := s.opts.VirtualMedia
	s.mu.Lock()
	st := dev.MediaState
	s.mu.Unlock()
	doc["Inserted"] = st.Inserted
	doc["WriteProtected"] = st.WriteProtected
	doc["ConnectedVia"] = "NotConnected"
	doc["Image"], doc["ImageName"] = nil, nil
	if st.Image != "" {
		doc["ConnectedVia"] = "URI"
		doc["Image"] = st.Image
		if u, err := url.Parse(st.Image); err == nil {
			doc["ImageName"] = path.Base(u.Path)
		}
	}
	delete(doc, "TransferMethod")
	if st.TransferMethod != "" {
		doc["TransferMethod"] = st.TransferMethod
	}
	target := s.mediaBase(sys) + "/" + dev.Device + "/Actions/"
	switch {
	case vo.NoActions:
		doc["@odata.type"] = "#VirtualMedia.v1_1_0.VirtualMedia"
		delete(doc, "Actions")
		for _, k := range []string{"Certificates", "VerifyCertificate"} {
			delete(doc, k) // v1.4 properties
		}
	case vo.NoTransferMethod:
		doc["@odata.type"] = "#VirtualMedia.v1_2_0.VirtualMedia"
		for _, k := range []string{"Certificates", "VerifyCertificate"} {
			delete(doc, k)
		}
		doc["Actions"] = map[string]any{
			"#" + insertAction: map[string]any{"target": target + insertAction},
			"#" + ejectAction:  map[string]any{"target": target + ejectAction},
		}
	default:
		doc["Actions"] = map[string]any{
			"#" + insertAction: map[string]any{"target": target + insertAction,
				"TransferMethod@Redfish.AllowableValues":       []string{"Stream"},
				"TransferProtocolType@Redfish.AllowableValues": []string{"HTTP", "HTTPS"}},
			"#" + ejectAction: map[string]any{"target": target + ejectAction},
		}
	}
	return doc
}

// imageURLOK is what the simulated BMC can fetch: absolute http or https.
func imageURLOK(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// insertMedia handles #VirtualMedia.InsertMedia.
func (s *Server) insertMedia(w http.ResponseWriter, r *http.Request, sys *system, dev *mediaDev) {
	body, ok := s.requireJSON(w, r)
	if !ok {
		return
	}
	params := []string{"Image", "Inserted", "WriteProtected", "UserName", "Password"}
	if !s.opts.VirtualMedia.NoTransferMethod {
		params = append(params, "TransferMethod", "TransferProtocolType")
	}
	var msgs []message
	str := func(k string) (string, bool) {
		v, present := body[k]
		if !present {
			return "", false
		}
		sv, ok := v.(string)
		if !ok {
			msgs = append(msgs, s.reg.msg("ActionParameterValueTypeError", []string{"#/" + k}, jsonText(v), k, insertAction))
		}
		return sv, ok
	}
	boolean := func(k string, def bool) bool {
		v, present := body[k]
		if !present {
			return def
		}
		b, ok := v.(bool)
		if !ok {
			msgs = append(msgs, s.reg.msg("ActionParameterValueTypeError", []string{"#/" + k}, jsonText(v), k, insertAction))
		}
		return b
	}
	oneOf := func(k string, allowed ...string) string {
		sv, ok := str(k)
		if ok && !slices.Contains(allowed, sv) {
			msgs = append(msgs, s.reg.msg("ActionParameterValueNotInList", []string{"#/" + k}, sv, k, insertAction))
		}
		return sv
	}
	for _, k := range sortedKeys(body) {
		if !slices.Contains(params, k) {
			msgs = append(msgs, s.reg.msg("ActionParameterUnknown", []string{"#/" + k}, insertAction, k))
		}
	}
	image, hasImage := str("Image")
	switch _, present := body["Image"]; {
	case !present:
		msgs = append(msgs, s.reg.msg("ActionParameterMissing", []string{"#/Image"}, insertAction, "Image"))
	case hasImage && !imageURLOK(image):
		msgs = append(msgs, s.reg.msg("ActionParameterValueFormatError", []string{"#/Image"}, jsonText(image), "Image", insertAction))
	}
	inserted := boolean("Inserted", true)
	wp := boolean("WriteProtected", true)
	str("UserName")
	str("Password")
	var method string
	if !s.opts.VirtualMedia.NoTransferMethod {
		method = oneOf("TransferMethod", "Stream")
		if proto := oneOf("TransferProtocolType", "HTTP", "HTTPS"); proto != "" && hasImage && imageURLOK(image) &&
			!strings.EqualFold(proto, strings.SplitN(image, ":", 2)[0]) {
			msgs = append(msgs, s.reg.msg("ActionParameterValueFormatError", []string{"#/Image"}, jsonText(image), "Image", insertAction))
		}
	}
	if len(msgs) > 0 {
		writeError(w, http.StatusBadRequest, msgs...)
		return
	}
	if !s.setMedia(w, sys, dev, MediaState{Inserted: inserted, Image: image, WriteProtected: wp, TransferMethod: method}) {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ejectMedia handles #VirtualMedia.EjectMedia, which takes no parameters.
func (s *Server) ejectMedia(w http.ResponseWriter, r *http.Request, sys *system, dev *mediaDev) {
	body, ok := s.requireJSON(w, r)
	if !ok {
		return
	}
	var msgs []message
	for _, k := range sortedKeys(body) {
		msgs = append(msgs, s.reg.msg("ActionParameterUnknown", []string{"#/" + k}, ejectAction, k))
	}
	if len(msgs) > 0 {
		writeError(w, http.StatusBadRequest, msgs...)
		return
	}
	if !s.setMedia(w, sys, dev, MediaState{}) {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// patchMedia handles PATCH of a device (VirtualMediaOptions.NoActions):
// Image (a URL, or null to eject), Inserted and WriteProtected.
func (s *Server) patchMedia(w http.ResponseWriter, r *http.Request, sys *system, dev *mediaDev) {
	current := s.mediaDoc(sys, dev)
	if !ifMatch(r, etag(marshalDoc(current))) {
		writeError(w, http.StatusPreconditionFailed, s.reg.msg("PreconditionFailed", nil))
		return
	}
	body, ok := s.requireJSON(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	next := dev.MediaState
	s.mu.Unlock()
	var msgs []message
	for _, k := range sortedKeys(body) {
		v := body[k]
		switch k {
		case "Image":
			switch sv, ok := v.(string); {
			case v == nil:
				next.Image, next.Inserted = "", false
			case !ok:
				msgs = append(msgs, s.reg.msg("PropertyValueTypeError", []string{"#/Image"}, jsonText(v), k))
			case !imageURLOK(sv):
				msgs = append(msgs, s.reg.msg("PropertyValueFormatError", []string{"#/Image"}, jsonText(v), k))
			default:
				if _, set := body["Inserted"]; !set {
					next.Inserted = true
				}
				next.Image = sv
			}
		case "Inserted", "WriteProtected":
			b, ok := v.(bool)
			if !ok {
				msgs = append(msgs, s.reg.msg("PropertyValueTypeError", []string{"#/" + k}, jsonText(v), k))
			} else if k == "Inserted" {
				next.Inserted = b
			} else {
				next.WriteProtected = b
			}
		default:
			if _, exists := current[k]; exists {
				msgs = append(msgs, s.reg.msg("PropertyNotWritable", []string{"#/" + k}, k))
			} else {
				msgs = append(msgs, s.reg.msg("PropertyUnknown", []string{"#/" + k}, k))
			}
		}
	}
	if next.Inserted && next.Image == "" {
		msgs = append(msgs, s.reg.msg("PropertyMissing", []string{"#/Image"}, "Image"))
	}
	if len(msgs) > 0 {
		writeError(w, http.StatusBadRequest, msgs...)
		return
	}
	if !next.Inserted {
		next.Image = ""
	}
	s.mu.Lock()
	if next.Image == "" && dev.Image == "" && !dev.Inserted {
		// Nothing to insert or eject: only WriteProtected, if anything.
		dev.WriteProtected = next.WriteProtected
		s.stats.Patches++
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.mu.Unlock()
	if !s.setMedia(w, sys, dev, next) {
		return
	}
	s.mu.Lock()
	s.stats.Patches++
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// setMedia changes a device to next (an insert when next has an image, an
// eject otherwise), refusing an insert into a device that holds another
// image and an eject of an empty one. It reports the change to OnMedia.
func (s *Server) setMedia(w http.ResponseWriter, sys *system, dev *mediaDev, next MediaState) bool {
	s.mu.Lock()
	cur := dev.MediaState
	insert := next.Image != ""
	switch {
	case insert && cur.Image != "" && cur.Image != next.Image:
		s.mu.Unlock()
		m := s.reg.msg("ResourceInUse", nil)
		m.Resolution = fmt.Sprintf("The virtual media %s holds an image; eject it first.", dev.Device)
		writeError(w, http.StatusBadRequest, m)
		return false
	case !insert && cur.Image == "" && !cur.Inserted:
		s.mu.Unlock()
		m := s.reg.msg("GeneralError", nil)
		m.Resolution = fmt.Sprintf("The virtual media %s holds no image; there is nothing to eject.", dev.Device)
		writeError(w, http.StatusBadRequest, m)
		return false
	}
	next.Device, next.MediaTypes = cur.Device, cur.MediaTypes
	if !insert {
		next = MediaState{Device: cur.Device, MediaTypes: cur.MediaTypes}
		s.stats.MediaEjects++
	} else if cur.Image == "" {
		s.stats.MediaInserts++
	}
	dev.MediaState = next
	ev := MediaEvent{SystemID: sys.id, MediaState: next}
	ev.MediaTypes = slices.Clone(next.MediaTypes)
	s.mediaEvents = append(s.mediaEvents, ev)
	hook := s.opts.OnMedia
	s.mu.Unlock()
	if hook != nil {
		hook(ev)
	}
	return true
}

// cdImageLocked is the image in sys's CD (a device taking CD or DVD
// images), or "".
func (sys *system) cdImageLocked() string {
	for _, d := range sys.media {
		if d.Inserted && (slices.Contains(d.MediaTypes, "CD") || slices.Contains(d.MediaTypes, "DVD")) {
			return d.Image
		}
	}
	return ""
}

// VirtualMedia returns the state of a system's virtual media devices, in
// collection order (nil for an unknown system or without virtual media).
func (s *Server) VirtualMedia(systemID string) []MediaState {
	s.mu.Lock()
	defer s.mu.Unlock()
	sys := s.system(systemID)
	if sys == nil || len(sys.media) == 0 {
		return nil
	}
	out := make([]MediaState, len(sys.media))
	for i, d := range sys.media {
		out[i] = d.MediaState
		out[i].MediaTypes = slices.Clone(d.MediaTypes)
	}
	return out
}

// MediaEvents returns the inserts and ejects so far, oldest first.
func (s *Server) MediaEvents() []MediaEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.mediaEvents)
}
