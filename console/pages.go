package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// A page is a list of regions, each an element with an ID rendered by
// its own template. The first render sends them inside the layout; a live
// stream renders them again on every change and sends the ones whose HTML
// changed, so pages and updates share one code path.

type view string

const (
	viewRacks    view = "racks"
	viewHost     view = "host"
	viewMachines view = "machines"
	viewTickets  view = "tickets"
)

type region struct {
	ID   string
	HTML template.HTML
}

type rendered struct {
	Title   string
	Head    template.HTML // above the regions, not live (filters)
	Regions []region
	Notes   []string // what the person may not read here
}

// request is what a view renders: the namespace, the query and, for a
// Host page, the Host and a source of its Events.
type request struct {
	ns       string
	q        url.Values
	hostNS   string
	hostName string
	events   func() ([]*corev1.Event, error)
	now      time.Time
}

func (s *Server) renderTemplate(name string, data any) (template.HTML, error) {
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil // #nosec: html/template escaped it
}

func (s *Server) regionOf(id, tmpl string, data any) (region, error) {
	h, err := s.renderTemplate(tmpl, data)
	return region{ID: id, HTML: h}, err
}

// kindsOf is what a view reads.
func kindsOf(v view) []kind {
	switch v {
	case viewRacks:
		return []kind{kindHosts, kindMachines}
	case viewHost:
		return []kind{kindHosts, kindMachines}
	case viewMachines:
		return []kind{kindMachines, kindMachineSet, kindHosts}
	case viewTickets:
		return []kind{kindTickets, kindMachines, kindHosts}
	}
	return nil
}

func deniedNotes(st *store, kinds []kind) []string {
	var out []string
	for _, k := range kinds {
		if err := st.denied(k); err != nil {
			where := "in namespace " + st.ns
			if st.ns == "" {
				where = "in all namespaces (choose one with ?ns=)"
			}
			out = append(out, fmt.Sprintf("You may not list %s %s; the API server said: %s", k, where, apiMessage(err)))
		}
	}
	return out
}

// apiMessage is the API server's own words for an error.
func apiMessage(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Message != "" {
		return st.Status().Message
	}
	return err.Error()
}

// render computes a view's regions from the store.
func (s *Server) render(st *store, v view, req request) (rendered, error) {
	switch v {
	case viewRacks:
		return s.renderRacks(st, req)
	case viewHost:
		return s.renderHost(st, req)
	case viewMachines:
		return s.renderMachines(st, req)
	case viewTickets:
		return s.renderTickets(st, req)
	}
	return rendered{}, fmt.Errorf("no view %q", v)
}

type racksHead struct {
	Filter rackFilter
	NS     string
}

type racksSummary struct {
	P      rackPage
	Filter rackFilter
	NS     string
}

func filterOf(q url.Values) rackFilter {
	page, _ := strconv.Atoi(q.Get("page"))
	return rackFilter{Query: q.Get("q"), Problems: q.Get("problems") == "1", Page: page}
}

func (s *Server) renderRacks(st *store, req request) (rendered, error) {
	f := filterOf(req.q)
	p := groupRacks(st.hosts(), indexMachines(st.machines()), f, s.cfg.PageSize)
	out := rendered{Title: "Racks", Notes: deniedNotes(st, kindsOf(viewRacks))}
	var err error
	if out.Head, err = s.renderTemplate("racks-head", racksHead{Filter: f, NS: req.ns}); err != nil {
		return out, err
	}
	r, err := s.regionOf("racks-summary", "racks-summary", racksSummary{P: p, Filter: f, NS: req.ns})
	if err != nil {
		return out, err
	}
	out.Regions = append(out.Regions, r)
	for _, rk := range p.Racks {
		r, err := s.regionOf(rk.ID, "rack", rk)
		if err != nil {
			return out, err
		}
		out.Regions = append(out.Regions, r)
	}
	return out, nil
}

// hostDetail is the Host page's data.
type hostDetail struct {
	Tile         tile
	H            *metalv1.Host
	BMC          string
	Rack, Domain string
	Conditions   []metav1.Condition
	Machine      *machineRow
	Pending      string
	Issued       string
	Leases       []metalv1.DHCPLease
	Boots        []eventRow
	Boot         *metalv1.MachineBoot // the Machine's provisioning boot
}

type eventRow struct {
	Time, Type, Reason, Message, Source string
	Count                               int32
	Warning                             bool
}

func eventRows(es []*corev1.Event) []eventRow {
	out := make([]eventRow, 0, len(es))
	for _, e := range es {
		out = append(out, eventRow{Time: eventTime(e).UTC().Format(time.RFC3339), Type: e.Type, Reason: e.Reason, Message: e.Message,
			Source: e.Source.Component + e.ReportingController, Count: e.Count, Warning: e.Type == corev1.EventTypeWarning})
	}
	return out
}

func (s *Server) renderHost(st *store, req request) (rendered, error) {
	h := st.host(req.hostNS, req.hostName)
	out := rendered{Title: "Host " + req.hostName, Notes: deniedNotes(st, kindsOf(viewHost))}
	if h == nil {
		r, err := s.regionOf("host-main", "host-missing", struct{ NS, Name string }{req.hostNS, req.hostName})
		out.Regions = append(out.Regions, r)
		return out, err
	}
	d := hostDetail{H: h, BMC: bmcAddress(h.Spec.BMC.Address), Rack: h.Labels[metalv1.LabelRack], Domain: h.Labels[metalv1.LabelFailureDomain],
		Conditions: h.Status.Conditions, Leases: h.Status.Leases}
	m := indexMachines(st.machines()).on(h)
	d.Tile = hostTile(h, m)
	if m != nil {
		row := machineRowOf(m)
		d.Machine = &row
		d.Boot = m.Status.Boot
	}
	if p := h.Status.PendingPowerAction; p != nil {
		d.Pending = "power " + string(p.Action)
		if p.BootDevice != "" {
			d.Pending += " with a one-time " + string(p.BootDevice) + " boot"
		}
		d.Pending += ", requested " + ago(req.now, p.RequestedAt.Time)
	}
	if p := h.Status.IssuedPowerAction; p != nil {
		d.Issued = fmt.Sprintf("power %s sent %s (attempt %d), waiting for the BMC to report %s", p.Action, ago(req.now, p.IssuedAt.Time), p.Attempts, p.Target)
	}
	var events []eventRow
	if req.events != nil {
		es, err := req.events()
		if err != nil {
			out.Notes = append(out.Notes, "You may not read this Host's Events: "+apiMessage(err))
		}
		events = eventRows(es)
		for _, e := range events {
			switch e.Reason {
			case "NetworkBoot", "Booted", "BootTimeout", "PowerOn", "PowerOff", "PowerReset", "PowerCycle", "PowerChanged", "ManualActionRequired":
				d.Boots = append(d.Boots, e)
			}
		}
	}
	for _, part := range []struct{ id, tmpl string }{{"host-summary", "host-summary"}, {"host-conditions", "host-conditions"}, {"host-power", "host-power"}} {
		r, err := s.regionOf(part.id, part.tmpl, d)
		if err != nil {
			return out, err
		}
		out.Regions = append(out.Regions, r)
	}
	r, err := s.regionOf("host-events", "host-events", events)
	out.Regions = append(out.Regions, r)
	return out, err
}

type machinesData struct {
	Sets     []setView
	Machines []machineRow
}

func (s *Server) renderMachines(st *store, req request) (rendered, error) {
	out := rendered{Title: "Machines", Notes: deniedNotes(st, kindsOf(viewMachines))}
	hosts := map[string]*metalv1.Host{}
	for _, h := range st.hosts() {
		hosts[h.Namespace+"/"+h.Name] = h
	}
	ms := st.machines()
	var d machinesData
	for _, set := range st.machineSets() {
		var members []*metalv1.Machine
		for _, m := range ms {
			if m.Namespace == set.Namespace && m.Labels[metalv1.LabelMachineSet] == set.Name {
				members = append(members, m)
			}
		}
		d.Sets = append(d.Sets, setRollout(set, members, hosts))
	}
	for _, m := range ms {
		d.Machines = append(d.Machines, machineRowOf(m))
	}
	r1, err := s.regionOf("machinesets", "machinesets", d)
	if err != nil {
		return out, err
	}
	r2, err := s.regionOf("machines", "machines", d)
	out.Regions = append(out.Regions, r1, r2)
	return out, err
}

type ticketsData struct {
	Requests   []hardwareRequestRow
	Power      []powerRow
	Deliveries []ticketRow
}

type hardwareRequestRow struct {
	Machine, Namespace, State, ID, URL, Error, Filed string
}

type powerRow struct {
	Host, Namespace, URL, Action, Requested string
}

func (s *Server) renderTickets(st *store, req request) (rendered, error) {
	out := rendered{Title: "Tickets", Notes: deniedNotes(st, kindsOf(viewTickets))}
	var d ticketsData
	for _, m := range st.machines() {
		hr := m.Status.HardwareRequest
		if hr == nil || hr.State == metalv1.HardwareRequestFulfilled || hr.State == metalv1.HardwareRequestCancelled {
			continue
		}
		row := hardwareRequestRow{Machine: m.Name, Namespace: m.Namespace, State: orDash(string(hr.State)), ID: hr.ID, Error: hr.LastError}
		if u, err := url.Parse(hr.URL); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
			u.User = nil
			row.URL = u.String()
		}
		if hr.FiledAt != nil {
			row.Filed = ago(req.now, hr.FiledAt.Time)
		}
		d.Requests = append(d.Requests, row)
	}
	for _, h := range st.hosts() {
		if p := h.Status.PendingPowerAction; p != nil {
			a := "power " + string(p.Action)
			if p.BootDevice != "" {
				a += " with a one-time " + string(p.BootDevice) + " boot"
			}
			d.Power = append(d.Power, powerRow{Host: h.Name, Namespace: h.Namespace, URL: hostURL(h.Namespace, h.Name), Action: a, Requested: ago(req.now, p.RequestedAt.Time)})
		}
	}
	for _, t := range st.tickets() {
		d.Deliveries = append(d.Deliveries, ticketRowOf(t, req.now))
	}
	for _, part := range []string{"tickets-requests", "tickets-power", "tickets-deliveries"} {
		r, err := s.regionOf(part, part, d)
		if err != nil {
			return out, err
		}
		out.Regions = append(out.Regions, r)
	}
	return out, nil
}

// pageData is what the layout renders.
type pageData struct {
	rendered
	View view
	User string
	CSRF string
	NS   string
	Live string
}

// page serves a view's first render.
func (s *Server) page(v view) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := s.signedIn(w, r)
		if sess == nil {
			return
		}
		ns := s.namespace(r)
		req := request{ns: ns, q: r.URL.Query(), now: s.cfg.Now()}
		if v == viewHost {
			req.hostNS, req.hostName = r.PathValue("ns"), r.PathValue("name")
			ns = req.hostNS
			req.events = func() ([]*corev1.Event, error) {
				return listEvents(r.Context(), sess.c, "Host", req.hostNS, req.hostName)
			}
		}
		st := sess.store(ns)
		ctx, cancel := context.WithTimeout(r.Context(), 60*time.Second)
		defer cancel()
		if err := st.ensure(ctx, kindsOf(v)...); err != nil {
			s.cfg.Log.Error(err, "console: reading the API", "user", sess.user)
			http.Error(w, "reading the API server failed: "+apiMessage(err), http.StatusBadGateway)
			return
		}
		gen, _ := st.generation()
		out, err := s.render(st, v, req)
		if err != nil {
			s.cfg.Log.Error(err, "rendering a console page", "view", v)
			http.Error(w, "the console could not render this page; its log says why", http.StatusInternalServerError)
			return
		}
		live := url.Values{}
		for k, vs := range r.URL.Query() {
			live[k] = vs
		}
		live.Set("view", string(v))
		live.Set("ns", ns)
		live.Set("gen", strconv.FormatUint(gen, 10))
		if v == viewHost {
			live.Set("host", req.hostName)
		}
		status := http.StatusOK
		if v == viewHost && st.host(req.hostNS, req.hostName) == nil {
			status = http.StatusNotFound
		}
		s.execute(w, status, "page", pageData{rendered: out, View: v, User: sess.user, CSRF: sess.csrf, NS: ns, Live: "/live?" + live.Encode()})
	}
}
