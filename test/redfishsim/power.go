package redfishsim

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// Values the simulator accepts for the Boot properties that have no
// @Redfish.AllowableValues annotation in the mockup (the schema's enums).
var (
	overrideEnabledValues = []string{"Disabled", "Once", "Continuous"}
	overrideModeValues    = []string{"Legacy", "UEFI"}
)

// patchSystem handles PATCH of a ComputerSystem: Boot override properties
// and AssetTag are writable; everything else is rejected the way real BMCs
// do. Either every property is applied or none.
func (s *Server) patchSystem(w http.ResponseWriter, r *http.Request, sys *system) {
	current := s.systemDoc(sys)
	if !ifMatch(r, etag(marshalDoc(current))) {
		writeError(w, http.StatusPreconditionFailed, s.reg.msg("PreconditionFailed", nil))
		return
	}
	body, ok := s.requireJSON(w, r)
	if !ok {
		return
	}
	var msgs []message
	unknownOrReadOnly := func(doc map[string]any, k, ptr string) {
		if _, exists := doc[k]; exists {
			msgs = append(msgs, s.reg.msg("PropertyNotWritable", []string{ptr}, k))
		} else {
			msgs = append(msgs, s.reg.msg("PropertyUnknown", []string{ptr}, k))
		}
	}
	str := func(v any, k, ptr string) (string, bool) {
		sv, ok := v.(string)
		if !ok {
			msgs = append(msgs, s.reg.msg("PropertyValueTypeError", []string{ptr}, jsonText(v), k))
		}
		return sv, ok
	}
	enum := func(v any, k, ptr string, allowed []string) (string, bool) {
		sv, ok := str(v, k, ptr)
		if !ok {
			return "", false
		}
		if !slices.Contains(allowed, sv) {
			msgs = append(msgs, s.reg.msg("PropertyValueNotInList", []string{ptr}, sv, k))
			return "", false
		}
		return sv, true
	}

	var (
		target, enabled, mode, uefiTarget, assetTag          *string
		curBoot, _                                           = current["Boot"].(map[string]any)
		targetAllowed                                        = sys.allowedTargets
		setTarget, setEnabled, setMode, setUefi, setAssetTag bool
	)
	for _, k := range sortedKeys(body) {
		v := body[k]
		switch k {
		case "AssetTag":
			if sv, ok := str(v, k, "#/AssetTag"); ok {
				assetTag, setAssetTag = &sv, true
			}
		case "Boot":
			bm, ok := v.(map[string]any)
			if !ok {
				msgs = append(msgs, s.reg.msg("PropertyValueTypeError", []string{"#/Boot"}, jsonText(v), "Boot"))
				continue
			}
			for _, bk := range sortedKeys(bm) {
				ptr := "#/Boot/" + bk
				bv := bm[bk]
				switch bk {
				case "BootSourceOverrideTarget":
					if len(targetAllowed) == 0 {
						targetAllowed = []string{"None", "Pxe", "Hdd"}
						if sys.media != nil {
							targetAllowed = append(targetAllowed, "Cd")
						}
					}
					if sv, ok := enum(bv, bk, ptr, targetAllowed); ok {
						target, setTarget = &sv, true
					}
				case "BootSourceOverrideEnabled":
					if sv, ok := enum(bv, bk, ptr, overrideEnabledValues); ok {
						enabled, setEnabled = &sv, true
					}
				case "BootSourceOverrideMode":
					if sv, ok := enum(bv, bk, ptr, overrideModeValues); ok {
						mode, setMode = &sv, true
					}
				case "UefiTargetBootSourceOverride":
					if sv, ok := str(bv, bk, ptr); ok {
						uefiTarget, setUefi = &sv, true
					}
				default:
					unknownOrReadOnly(curBoot, bk, ptr)
				}
			}
		default:
			unknownOrReadOnly(current, k, "#/"+k)
		}
	}
	if len(msgs) > 0 {
		writeError(w, http.StatusBadRequest, msgs...)
		return
	}
	s.mu.Lock()
	if setTarget {
		sys.bootTarget = *target
	}
	if setEnabled {
		sys.bootEnabled = *enabled
	}
	if setMode {
		sys.bootMode = *mode
	}
	if setUefi {
		sys.uefiTarget = *uefiTarget
	}
	if setAssetTag {
		sys.assetTag = *assetTag
	}
	s.stats.Patches++
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func jsonText(v any) string {
	return string(mustJSON(v))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("?")
	}
	return b
}

// reset handles the ComputerSystem.Reset action.
func (s *Server) reset(w http.ResponseWriter, r *http.Request, sys *system) {
	body, ok := s.requireJSON(w, r)
	if !ok {
		return
	}
	const action = "ComputerSystem.Reset"
	var msgs []message
	for _, k := range sortedKeys(body) {
		if k != "ResetType" {
			msgs = append(msgs, s.reg.msg("ActionParameterUnknown", []string{"#/" + k}, action, k))
		}
	}
	rv, present := body["ResetType"]
	rt, isStr := rv.(string)
	switch {
	case !present:
		msgs = append(msgs, s.reg.msg("ActionParameterMissing", []string{"#/ResetType"}, action, "ResetType"))
	case !isStr:
		msgs = append(msgs, s.reg.msg("PropertyValueTypeError", []string{"#/ResetType"}, jsonText(rv), "ResetType"))
	case len(sys.allowedResets) > 0 && !slices.Contains(sys.allowedResets, rt):
		msgs = append(msgs, s.reg.msg("PropertyValueNotInList", []string{"#/ResetType"}, rt, "ResetType"))
	}
	if len(msgs) > 0 {
		writeError(w, http.StatusBadRequest, msgs...)
		return
	}
	s.mu.Lock()
	if s.stats.ResetRequests == nil {
		s.stats.ResetRequests = map[string]int{}
	}
	s.stats.ResetRequests[rt]++
	if sys.pending != nil && s.opts.RefuseResetWhileChanging {
		s.mu.Unlock()
		writeError(w, http.StatusConflict, s.reg.msg("ResourceInUse", nil))
		return
	}
	s.stats.Resets++
	if sys.pending != nil {
		// A real BMC restarts the change: the earlier request never lands.
		sys.pending.Stop()
		sys.pending = nil
	}
	if s.opts.PowerDelay > 0 {
		sys.pending = time.AfterFunc(s.opts.PowerDelay, func() { s.applyReset(sys, rt) })
		s.mu.Unlock()
	} else {
		s.mu.Unlock()
		s.applyReset(sys, rt)
	}
	w.WriteHeader(http.StatusNoContent)
}

// applyReset changes the power state for a reset type:
//
//	On, ForceOn              off → on
//	ForceOff, GracefulShutdown on → off
//	ForceRestart, GracefulRestart, PowerCycle
//	                         on → off → on (one boot); off → on
//	PushPowerButton          toggles
//	Nmi and anything else    no change
//
// Every power-on consumes a "Once" boot override.
func (s *Server) applyReset(sys *system, rt string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	sys.pending = nil
	was := sys.power == "On"
	var on, restart bool
	switch rt {
	case "On", "ForceOn":
		on = true
	case "ForceOff", "GracefulShutdown":
		on = false
	case "ForceRestart", "GracefulRestart", "PowerCycle":
		on, restart = true, was
	case "PushPowerButton":
		on = !was
	default:
		s.mu.Unlock()
		return
	}
	if on == was && !restart {
		s.mu.Unlock()
		return
	}
	ev := PowerEvent{SystemID: sys.id, On: on, Restart: restart, ResetType: rt}
	if on {
		if sys.bootEnabled == "Once" || sys.bootEnabled == "Continuous" {
			ev.BootTarget, ev.BootMode = sys.bootTarget, sys.bootMode
		}
		ev.CDImage = sys.cdImageLocked()
		if sys.bootEnabled == "Once" {
			sys.bootEnabled = "Disabled"
		}
		sys.power = "On"
	} else {
		sys.power = "Off"
	}
	s.events = append(s.events, ev)
	s.publishPowerLocked(sys, on)
	hook := s.opts.OnPower
	s.mu.Unlock()
	if hook != nil {
		hook(ev)
	}
}
