package redfishsim

import (
	"net/http"
	"slices"
	"testing"
)

const (
	sysMedia = sysPath + "/VirtualMedia"
	cd1      = sysMedia + "/CD1"
	insertCD = cd1 + "/Actions/VirtualMedia.InsertMedia"
	ejectCD  = cd1 + "/Actions/VirtualMedia.EjectMedia"
	image    = "https://anvil.example:8443/boot/one-time-token/boot.iso"
)

func TestVirtualMediaInsertAndEject(t *testing.T) {
	events := make(chan MediaEvent, 4)
	s := startSim(t, Options{OnMedia: func(ev MediaEvent) { events <- ev }})
	c := newClient(t, s)
	c.login()

	sys := c.do("GET", sysPath, nil, nil)
	if link, _ := sys.body["VirtualMedia"].(map[string]any); link["@odata.id"] != sysMedia {
		t.Fatalf("system's VirtualMedia link %v, want %s", sys.body["VirtualMedia"], sysMedia)
	}
	coll := c.do("GET", sysMedia, nil, nil)
	if n, _ := coll.body["Members"].([]any); coll.status != 200 || len(n) != 2 {
		t.Fatalf("collection: %d %s", coll.status, coll.raw)
	}
	dev := c.do("GET", cd1, nil, nil)
	if dev.body["Inserted"] != false || dev.body["Image"] != nil || dev.body["ConnectedVia"] != "NotConnected" {
		t.Fatalf("CD1 does not start empty: %s", dev.raw)
	}
	insert := dev.body["Actions"].(map[string]any)["#VirtualMedia.InsertMedia"].(map[string]any)
	if insert["target"] != insertCD || !slices.Equal(stringList(insert["TransferMethod@Redfish.AllowableValues"]), []string{"Stream"}) {
		t.Fatalf("InsertMedia action %v", insert)
	}

	if r := c.do("POST", insertCD, map[string]any{"Image": image, "TransferMethod": "Stream", "TransferProtocolType": "HTTPS"}, nil); r.status != http.StatusNoContent {
		t.Fatalf("insert: %d %s", r.status, r.raw)
	}
	ev := <-events
	if ev.SystemID != "437XR1138R2" || ev.Device != "CD1" || !ev.Inserted || ev.Image != image || !ev.WriteProtected || ev.TransferMethod != "Stream" {
		t.Fatalf("media event %+v", ev)
	}
	dev = c.do("GET", cd1, nil, nil)
	if dev.body["Inserted"] != true || dev.body["Image"] != image || dev.body["ImageName"] != "boot.iso" ||
		dev.body["WriteProtected"] != true || dev.body["ConnectedVia"] != "URI" {
		t.Fatalf("CD1 after insert: %s", dev.raw)
	}
	if got := s.VirtualMedia("437XR1138R2"); len(got) != 2 || got[1].Device != "CD1" || got[1].Image != image || got[0].Inserted {
		t.Fatalf("VirtualMedia() = %+v", got)
	}

	// A second insert is refused while an image is in, even the same one.
	r := c.do("POST", insertCD, map[string]any{"Image": "http://other.example/x.iso"}, nil)
	redfishError(t, r, http.StatusBadRequest, "ResourceInUse")

	if r := c.do("POST", ejectCD, map[string]any{}, nil); r.status != http.StatusNoContent {
		t.Fatalf("eject: %d %s", r.status, r.raw)
	}
	if ev := <-events; ev.Inserted || ev.Image != "" || ev.Device != "CD1" {
		t.Fatalf("eject event %+v", ev)
	}
	redfishError(t, c.do("POST", ejectCD, map[string]any{}, nil), http.StatusBadRequest, "GeneralError")
	if st := s.Stats(); st.MediaInserts != 1 || st.MediaEjects != 1 {
		t.Fatalf("stats: %d inserts, %d ejects", st.MediaInserts, st.MediaEjects)
	}
}

func TestInsertMediaValidation(t *testing.T) {
	s := startSim(t, Options{})
	for _, tc := range []struct {
		name   string
		body   any
		status int
		id     string
	}{
		{"no image", map[string]any{"Inserted": true}, 400, "ActionParameterMissing"},
		{"image not a string", map[string]any{"Image": 7}, 400, "ActionParameterValueTypeError"},
		{"nfs image", map[string]any{"Image": "nfs://10.0.0.1/boot.iso"}, 400, "ActionParameterValueFormatError"},
		{"relative image", map[string]any{"Image": "boot.iso"}, 400, "ActionParameterValueFormatError"},
		{"protocol does not match", map[string]any{"Image": "http://a.example/b.iso", "TransferProtocolType": "HTTPS"}, 400, "ActionParameterValueFormatError"},
		{"upload", map[string]any{"Image": image, "TransferMethod": "Upload"}, 400, "ActionParameterValueNotInList"},
		{"inserted not a boolean", map[string]any{"Image": image, "Inserted": "yes"}, 400, "ActionParameterValueTypeError"},
		{"unknown parameter", map[string]any{"Image": image, "MediaType": "CD"}, 400, "ActionParameterUnknown"},
		{"not JSON", "Image=x", 400, "MalformedJSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, s)
			c.basic = true
			redfishError(t, c.do("POST", insertCD, tc.body, nil), tc.status, tc.id)
			if got := s.VirtualMedia("437XR1138R2"); got[1].Inserted || got[1].Image != "" {
				t.Fatalf("refused insert changed the CD: %+v", got[1])
			}
		})
	}
	t.Run("no credentials", func(t *testing.T) {
		c := newClient(t, s)
		r := c.do("POST", insertCD, map[string]any{"Image": image}, nil)
		if r.status != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", r.status)
		}
	})
	t.Run("wrong method", func(t *testing.T) {
		c := newClient(t, s)
		c.basic = true
		if r := c.do("PATCH", cd1, map[string]any{"Image": image}, nil); r.status != http.StatusMethodNotAllowed {
			t.Fatalf("PATCH of a device with actions: %d, want 405", r.status)
		}
	})
}

func TestVirtualMediaUnderManager(t *testing.T) {
	s := startSim(t, Options{VirtualMedia: VirtualMediaOptions{UnderManager: true}})
	c := newClient(t, s)
	c.basic = true
	if sys := c.do("GET", sysPath, nil, nil); sys.body["VirtualMedia"] != nil {
		t.Fatalf("system still links VirtualMedia: %v", sys.body["VirtualMedia"])
	}
	mgr := c.do("GET", "/redfish/v1/Managers/BMC", nil, nil)
	const coll = "/redfish/v1/Managers/BMC/VirtualMedia"
	if link, _ := mgr.body["VirtualMedia"].(map[string]any); link["@odata.id"] != coll {
		t.Fatalf("manager's VirtualMedia link %v", mgr.body["VirtualMedia"])
	}
	members := memberIDs(c.do("GET", coll, nil, nil).body)
	if !slices.Contains(members, coll+"/CD1") {
		t.Fatalf("manager collection members %v", members)
	}
	if r := c.do("POST", coll+"/CD1/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": image}, nil); r.status != http.StatusNoContent {
		t.Fatalf("insert: %d %s", r.status, r.raw)
	}
	if got := s.VirtualMedia("437XR1138R2")[1]; !got.Inserted || got.Image != image {
		t.Fatalf("CD1 %+v", got)
	}
	redfishError(t, c.do("GET", sysMedia, nil, nil), http.StatusNotFound, "ResourceMissingAtURI")

	if _, err := New(Options{VirtualMedia: VirtualMediaOptions{UnderManager: true}, Systems: []SystemOptions{{}, {}}}); err == nil {
		t.Fatal("UnderManager with two systems accepted")
	}
}

func TestVirtualMediaDisabled(t *testing.T) {
	s := startSim(t, Options{VirtualMedia: VirtualMediaOptions{Disabled: true}})
	c := newClient(t, s)
	c.basic = true
	if sys := c.do("GET", sysPath, nil, nil); sys.body["VirtualMedia"] != nil {
		t.Fatalf("system links VirtualMedia: %v", sys.body["VirtualMedia"])
	}
	redfishError(t, c.do("GET", sysMedia, nil, nil), http.StatusNotFound, "ResourceMissingAtURI")
	redfishError(t, c.do("POST", insertCD, map[string]any{"Image": image}, nil), http.StatusNotFound, "ResourceMissingAtURI")
	if s.VirtualMedia("437XR1138R2") != nil {
		t.Fatal("VirtualMedia() reports devices")
	}
}

// Older BMCs have no actions: Image and Inserted are PATCHed.
func TestVirtualMediaPatch(t *testing.T) {
	s := startSim(t, Options{VirtualMedia: VirtualMediaOptions{NoActions: true}})
	c := newClient(t, s)
	c.basic = true
	if dev := c.do("GET", cd1, nil, nil); dev.body["Actions"] != nil {
		t.Fatalf("actions advertised: %v", dev.body["Actions"])
	}
	redfishError(t, c.do("POST", insertCD, map[string]any{"Image": image}, nil), http.StatusNotFound, "ResourceMissingAtURI")
	redfishError(t, c.do("PATCH", cd1, map[string]any{"Image": "ftp://a.example/b.iso"}, nil), http.StatusBadRequest, "PropertyValueFormatError")
	redfishError(t, c.do("PATCH", cd1, map[string]any{"ImageName": "x"}, nil), http.StatusBadRequest, "PropertyNotWritable")

	etag := c.do("GET", cd1, nil, nil).header.Get("ETag")
	if r := c.do("PATCH", cd1, map[string]any{"Image": image, "Inserted": true}, map[string]string{"If-Match": etag}); r.status != http.StatusNoContent {
		t.Fatalf("PATCH insert: %d %s", r.status, r.raw)
	}
	redfishError(t, c.do("PATCH", cd1, map[string]any{"Inserted": false}, map[string]string{"If-Match": etag}), http.StatusPreconditionFailed, "PreconditionFailed")
	redfishError(t, c.do("PATCH", cd1, map[string]any{"Image": "http://other.example/c.iso"}, nil), http.StatusBadRequest, "ResourceInUse")
	if got := s.VirtualMedia("437XR1138R2")[1]; !got.Inserted || got.Image != image {
		t.Fatalf("CD1 after PATCH insert %+v", got)
	}
	if r := c.do("PATCH", cd1, map[string]any{"Image": nil, "Inserted": false}, nil); r.status != http.StatusNoContent {
		t.Fatalf("PATCH eject: %d %s", r.status, r.raw)
	}
	if got := s.VirtualMedia("437XR1138R2")[1]; got.Inserted || got.Image != "" {
		t.Fatalf("CD1 after PATCH eject %+v", got)
	}
}

func TestInsertMediaWithoutTransferMethod(t *testing.T) {
	s := startSim(t, Options{VirtualMedia: VirtualMediaOptions{NoTransferMethod: true}})
	c := newClient(t, s)
	c.basic = true
	insert := c.do("GET", cd1, nil, nil).body["Actions"].(map[string]any)["#VirtualMedia.InsertMedia"].(map[string]any)
	if _, ok := insert["TransferMethod@Redfish.AllowableValues"]; ok {
		t.Fatalf("TransferMethod advertised: %v", insert)
	}
	redfishError(t, c.do("POST", insertCD, map[string]any{"Image": image, "TransferMethod": "Stream"}, nil), http.StatusBadRequest, "ActionParameterUnknown")
	if r := c.do("POST", insertCD, map[string]any{"Image": image, "Inserted": true, "WriteProtected": true}, nil); r.status != http.StatusNoContent {
		t.Fatalf("insert: %d %s", r.status, r.raw)
	}
}

// A one-time Cd boot override with an image in the CD boots the image.
func TestBootFromVirtualCD(t *testing.T) {
	s := startSim(t, Options{Systems: []SystemOptions{{PowerState: "Off"}}})
	c := newClient(t, s)
	c.basic = true
	if r := c.do("PATCH", sysPath, map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}}, nil); r.status != http.StatusNoContent {
		t.Fatalf("boot override Cd: %d %s", r.status, r.raw)
	}
	if r := c.do("POST", insertCD, map[string]any{"Image": image}, nil); r.status != http.StatusNoContent {
		t.Fatalf("insert: %d %s", r.status, r.raw)
	}
	if r := c.do("POST", sysPath+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, nil); r.status != http.StatusNoContent {
		t.Fatalf("reset: %d %s", r.status, r.raw)
	}
	evs := s.Events()
	if len(evs) != 1 || evs[0].BootTarget != "Cd" || evs[0].CDImage != image {
		t.Fatalf("power events %+v", evs)
	}
}
