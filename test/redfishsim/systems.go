package redfishsim

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Systems are not cloned document by document: every system serves the
// mockup's first system subtree, rendered on request with its links
// rewritten to the system's path and the few properties that differ (Id,
// serial number, UUID, MACs) patched in. That keeps one simulator serving
// thousands of systems (one per Host of a scale test) in a few MB, and
// starting in milliseconds.

// systemTemplate is the mockup's first system subtree.
type systemTemplate struct {
	base string                    // path of the mockup system, e.g. /redfish/v1/Systems/437XR1138R2
	docs map[string]map[string]any // by path relative to base ("" is the system itself)
}

// setupSystems builds the systems from the mockup's first system.
func (s *Server) setupSystems() error {
	s.sysPaths = s.mock.linkFromRoot("Systems")
	coll := s.mock.docs[s.sysPaths]
	if coll == nil {
		return fmt.Errorf("redfishsim: mockup has no Systems collection at %s", s.sysPaths)
	}
	members := memberIDs(coll)
	if len(members) == 0 {
		return errors.New("redfishsim: mockup has no ComputerSystem")
	}
	basePath := members[0]
	base := s.mock.docs[basePath]
	if base == nil {
		return fmt.Errorf("redfishsim: mockup lacks %s", basePath)
	}
	baseID, _ := base["Id"].(string)
	s.tmpl = systemTemplate{base: basePath, docs: map[string]map[string]any{}}
	for _, p := range s.mock.subtree(basePath) {
		s.tmpl.docs[strings.TrimPrefix(p, basePath)] = s.mock.docs[p]
	}
	// The mockup's own systems are replaced by the simulated ones.
	for _, member := range members {
		s.mock.removeSubtree(member)
	}
	specs := s.opts.Systems
	if len(specs) == 0 {
		specs = []SystemOptions{{}}
	}
	s.byID = make(map[string]*system, len(specs))
	s.byReset = make(map[string]*system, len(specs))
	for i, spec := range specs {
		id := spec.ID
		if id == "" {
			id = baseID
			if i > 0 {
				id = fmt.Sprintf("%s-%d", baseID, i+1)
			}
		}
		if s.byID[id] != nil {
			return fmt.Errorf("redfishsim: duplicate system ID %q", id)
		}
		if strings.ContainsAny(id, "/?#") {
			return fmt.Errorf("redfishsim: system ID %q must not contain '/', '?' or '#'", id)
		}
		sys, err := s.newSystem(i, id, s.sysPaths+"/"+id, spec)
		if err != nil {
			return err
		}
		s.systems = append(s.systems, sys)
		s.byID[id] = sys
		s.byReset[strings.TrimRight(sys.resetTarget, "/")] = sys
	}
	return nil
}

func (s *Server) newSystem(i int, id, p string, spec SystemOptions) (*system, error) {
	sys := &system{id: id, path: p, patches: map[string]map[string]any{}}
	doc, _ := s.render(sys, "")
	top := map[string]any{"Id": id}
	if i > 0 {
		if serial, ok := doc["SerialNumber"].(string); ok {
			top["SerialNumber"] = fmt.Sprintf("%s-%d", serial, i+1)
		}
		if u, ok := doc["UUID"].(string); ok && len(u) >= 12 {
			top["UUID"] = fmt.Sprintf("%s%012d", u[:len(u)-12], i+1)
		}
	}
	if spec.UUID != "" {
		top["UUID"] = spec.UUID
	}
	sys.patches[""] = top
	sys.power, _ = doc["PowerState"].(string)
	if spec.PowerState != "" {
		if spec.PowerState != "On" && spec.PowerState != "Off" {
			return nil, fmt.Errorf("redfishsim: system %s: PowerState must be On or Off", id)
		}
		sys.power = spec.PowerState
	}
	if sys.power != "On" {
		sys.power = "Off"
	}
	sys.assetTag, _ = doc["AssetTag"].(string)
	if boot, ok := doc["Boot"].(map[string]any); ok {
		sys.bootTarget, _ = boot["BootSourceOverrideTarget"].(string)
		sys.bootEnabled, _ = boot["BootSourceOverrideEnabled"].(string)
		sys.bootMode, _ = boot["BootSourceOverrideMode"].(string)
		sys.uefiTarget, _ = boot["UefiTargetBootSourceOverride"].(string)
		sys.allowedTargets = stringList(boot["BootSourceOverrideTarget@Redfish.AllowableValues"])
	}
	if spec.BootTargets != nil {
		sys.allowedTargets = slices.Clone(spec.BootTargets)
	}
	if actions, ok := doc["Actions"].(map[string]any); ok {
		if reset, ok := actions["#ComputerSystem.Reset"].(map[string]any); ok {
			sys.resetTarget, _ = reset["target"].(string)
			sys.allowedResets = stringList(reset["ResetType@Redfish.AllowableValues"])
		}
	}
	if sys.resetTarget == "" {
		return nil, fmt.Errorf("redfishsim: system %s has no ComputerSystem.Reset action", id)
	}
	if len(spec.MACs) > 0 {
		if eth, ok := doc["EthernetInterfaces"].(map[string]any); ok {
			ethPath, _ := eth["@odata.id"].(string)
			coll := s.tmpl.docs[strings.TrimPrefix(strings.TrimRight(ethPath, "/"), p)]
			for j, m := range memberIDs(coll) {
				rel := strings.TrimPrefix(m, s.tmpl.base)
				if j < len(spec.MACs) && s.tmpl.docs[rel] != nil {
					sys.patches[rel] = map[string]any{"MACAddress": spec.MACs[j], "PermanentMACAddress": spec.MACs[j]}
				}
			}
		}
	}
	return sys, nil
}

// render returns a copy of the template resource at rel below the system,
// its links pointing at the system, with the system's own properties.
func (s *Server) render(sys *system, rel string) (map[string]any, bool) {
	t := s.tmpl.docs[rel]
	if t == nil {
		return nil, false
	}
	from, to := s.tmpl.base, sys.path
	doc := deepCopy(t, func(v string) string {
		if v == from || strings.HasPrefix(v, from+"/") || strings.HasPrefix(v, from+"#") {
			return to + strings.TrimPrefix(v, from)
		}
		return v
	}).(map[string]any)
	for k, v := range sys.patches[rel] {
		doc[k] = v
	}
	return doc, true
}

// routeSystem serves a path below the Systems collection.
func (s *Server) routeSystem(w http.ResponseWriter, r *http.Request, p string) {
	id, _, _ := strings.Cut(strings.TrimPrefix(p, s.sysPaths+"/"), "/")
	sys := s.byID[id]
	if sys == nil {
		writeError(w, http.StatusNotFound, s.reg.msg("ResourceMissingAtURI", nil, r.URL.Path))
		return
	}
	if p == sys.path {
		if !s.allow(w, r, "GET", "HEAD", "PATCH") {
			return
		}
		if r.Method == http.MethodPatch {
			s.patchSystem(w, r, sys)
			return
		}
		s.serveDoc(w, s.systemDoc(sys))
		return
	}
	rel := strings.TrimPrefix(p, sys.path)
	if sys.media != nil && (rel == mediaRel || strings.HasPrefix(rel, mediaRel+"/")) {
		if s.mgrMedia != "" { // served under the Manager instead
			writeError(w, http.StatusNotFound, s.reg.msg("ResourceMissingAtURI", nil, r.URL.Path))
			return
		}
		s.serveMedia(w, r, sys, strings.TrimPrefix(rel, mediaRel))
		return
	}
	doc, ok := s.render(sys, rel)
	if !ok {
		writeError(w, http.StatusNotFound, s.reg.msg("ResourceMissingAtURI", nil, r.URL.Path))
		return
	}
	if s.allow(w, r, "GET", "HEAD") {
		s.serveDoc(w, doc)
	}
}

func (s *Server) system(id string) *system { return s.byID[id] }

// systemByResetTarget finds the system whose Reset action is at p.
func (s *Server) systemByResetTarget(p string) *system { return s.byReset[p] }
