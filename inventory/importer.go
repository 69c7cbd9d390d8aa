package inventory

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// ImportRow is one Host to register, as read from a CSV or YAML file.
// Password is held only long enough to write the Secret; String redacts it.
type ImportRow struct {
	Line          int               `json:"-"`
	Name          string            `json:"name"`
	Namespace     string            `json:"namespace,omitempty"`
	BMCAddress    string            `json:"bmcAddress"`
	Username      string            `json:"username,omitempty"`
	Password      string            `json:"password,omitempty"`
	InsecureTLS   bool              `json:"disableCertificateVerification,omitempty"`
	BootMACs      []string          `json:"bootMACs"`
	Architecture  string            `json:"architecture,omitempty"`
	BootMode      string            `json:"bootMode,omitempty"`
	Rack          string            `json:"rack,omitempty"`
	FailureDomain string            `json:"failureDomain,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Address       string            `json:"address,omitempty"`
	Gateway       string            `json:"gateway,omitempty"`

	shapeError string // set when a CSV record has the wrong number of fields
}

// String never shows the password.
func (r ImportRow) String() string {
	return fmt.Sprintf("line %d: host %s (%s)", r.Line, r.Name, r.BMCAddress)
}

// RowError says why one input row is unusable.
type RowError struct {
	Line   int
	Name   string
	Reason string
}

func (e RowError) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("line %d (%s): %s", e.Line, e.Name, e.Reason)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
}

// RowErrors is every bad row of an import, in line order.
type RowErrors []RowError

func (es RowErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return fmt.Sprintf("%d bad row(s), nothing was created:\n  %s", len(es), strings.Join(lines, "\n  "))
}

// CSVColumns are the accepted CSV header names. name, bmc_address and
// boot_macs are required; boot_macs and labels use ';' between items.
var CSVColumns = []string{"name", "namespace", "bmc_address", "username", "password", "boot_macs",
	"architecture", "boot_mode", "rack", "failure_domain", "labels", "address", "gateway", "disable_certificate_verification"}

// ParseImport reads rows from CSV (a header line first) or YAML (a list of
// rows, or {hosts: [...]}) and detects the format from the content.
func ParseImport(r io.Reader) ([]ImportRow, error) {
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(b)
	if bytes.HasPrefix(trimmed, []byte("-")) || bytes.HasPrefix(trimmed, []byte("hosts:")) || bytes.HasPrefix(trimmed, []byte("#")) || bytes.HasPrefix(trimmed, []byte("---")) {
		return parseYAML(b)
	}
	return parseCSV(b)
}

func parseCSV(b []byte) ([]ImportRow, error) {
	cr := csv.NewReader(bytes.NewReader(b))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading CSV header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		known := false
		for _, c := range CSVColumns {
			known = known || c == h
		}
		if !known {
			return nil, fmt.Errorf("line 1: unknown CSV column %q (known: %s)", h, strings.Join(CSVColumns, ", "))
		}
		col[h] = i
	}
	for _, req := range []string{"name", "bmc_address", "boot_macs"} {
		if _, ok := col[req]; !ok {
			return nil, fmt.Errorf("line 1: CSV header lacks required column %q", req)
		}
	}
	var rows []ImportRow
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("line %d: %v", pe.Line, pe.Err)
			}
			return nil, err
		}
		get := func(k string) string {
			if i, ok := col[k]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		row := ImportRow{
			Line: line, Name: get("name"), Namespace: get("namespace"), BMCAddress: get("bmc_address"),
			Username: get("username"), Password: get("password"), Architecture: get("architecture"),
			BootMode: get("boot_mode"), Rack: get("rack"), FailureDomain: get("failure_domain"),
			Address: get("address"), Gateway: get("gateway"),
			BootMACs: splitList(get("boot_macs")),
		}
		if v := get("disable_certificate_verification"); v != "" {
			row.InsecureTLS, _ = strconv.ParseBool(v)
		}
		if l := get("labels"); l != "" {
			row.Labels = map[string]string{}
			for _, kv := range strings.Split(l, ";") {
				if strings.TrimSpace(kv) == "" {
					continue
				}
				k, v, _ := strings.Cut(kv, "=")
				row.Labels[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		if len(rec) != len(header) {
			row.shapeError = fmt.Sprintf("row has %d fields, the header %d", len(rec), len(header))
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ' ' }) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseYAML(b []byte) ([]ImportRow, error) {
	var wrapped struct {
		Hosts []ImportRow `json:"hosts"`
	}
	var rows []ImportRow
	if err := yaml.UnmarshalStrict(b, &rows); err != nil {
		if err2 := yaml.UnmarshalStrict(b, &wrapped); err2 != nil {
			return nil, fmt.Errorf("YAML: %v", err)
		}
		rows = wrapped.Hosts
	}
	// YAML carries no line numbers through sigs.k8s.io/yaml; number the
	// entries instead, which is what an admin counts in a list.
	for i := range rows {
		rows[i].Line = i + 1
	}
	return rows, nil
}

// ValidateRows checks every row and returns every problem, so an admin fixes
// the whole file in one go. existing are the Hosts already in the cluster.
func ValidateRows(rows []ImportRow, defaultNamespace string, existing []metalv1.Host) RowErrors {
	var errs RowErrors
	macLine := map[string]int{}
	nameLine := map[string]int{}
	existingMAC := map[string]string{}
	for _, h := range existing {
		for _, m := range IndexHostMACs(&h) {
			existingMAC[m] = h.Namespace + "/" + h.Name
		}
	}
	for _, r := range rows {
		bad := func(format string, a ...any) {
			errs = append(errs, RowError{Line: r.Line, Name: r.Name, Reason: fmt.Sprintf(format, a...)})
		}
		ns := r.Namespace
		if ns == "" {
			ns = defaultNamespace
		}
		if r.shapeError != "" {
			bad("%s", r.shapeError)
			continue
		}
		if msgs := validation.IsDNS1123Subdomain(r.Name); len(msgs) > 0 {
			bad("name %q: %s", r.Name, strings.Join(msgs, "; "))
		} else if prev, dup := nameLine[ns+"/"+r.Name]; dup {
			bad("name %q also on line %d", r.Name, prev)
		} else {
			nameLine[ns+"/"+r.Name] = r.Line
		}
		u, err := ParseBMCAddress(r.BMCAddress)
		if err != nil {
			bad("%v", err)
		} else if u.Scheme != "manual" && (r.Username == "" || r.Password == "") {
			bad("username and password are required for %s:// BMCs", u.Scheme)
		}
		if len(r.BootMACs) == 0 {
			bad("no boot MAC")
		}
		for _, m := range r.BootMACs {
			n, err := NormalizeMAC(m)
			if err != nil {
				bad("boot MAC %v", err)
				continue
			}
			if prev, dup := macLine[n]; dup {
				bad("boot MAC %s also on line %d", n, prev)
				continue
			}
			macLine[n] = r.Line
			if owner, ok := existingMAC[n]; ok && owner != ns+"/"+r.Name {
				bad("boot MAC %s is already registered to Host %s", n, owner)
			}
		}
		if r.Architecture != "" && r.Architecture != "x86_64" && r.Architecture != "aarch64" {
			bad("architecture %q: use x86_64 or aarch64", r.Architecture)
		}
		if r.BootMode != "" && r.BootMode != "UEFI" && r.BootMode != "Legacy" {
			bad("boot mode %q: use UEFI or Legacy", r.BootMode)
		}
		for k, v := range r.Labels {
			if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
				bad("label key %q: %s", k, strings.Join(msgs, "; "))
			}
			if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
				bad("label %s value %q: %s", k, v, strings.Join(msgs, "; "))
			}
		}
		for k, v := range map[string]string{"rack": r.Rack, "failure_domain": r.FailureDomain} {
			if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
				bad("%s %q: %s", k, v, strings.Join(msgs, "; "))
			}
		}
		if r.Address != "" || r.Gateway != "" {
			h := r.host(ns)
			h.Spec.BMC.Address, h.Spec.BootMACs = "", nil // reported above
			if p := validateSpec(h); p != nil {
				bad("%s", p.Message)
			}
		}
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	return errs
}

// SecretName is the credentials Secret created for an imported Host.
func SecretName(host string) string { return host + "-bmc" }

func (r ImportRow) host(ns string) *metalv1.Host {
	labels := map[string]string{}
	for k, v := range r.Labels {
		labels[k] = v
	}
	if r.Rack != "" {
		labels[metalv1.LabelRack] = r.Rack
	}
	if r.FailureDomain != "" {
		labels[metalv1.LabelFailureDomain] = r.FailureDomain
	}
	macs := make([]string, 0, len(r.BootMACs))
	for _, m := range r.BootMACs {
		if n, err := NormalizeMAC(m); err == nil {
			macs = append(macs, n)
		} else {
			macs = append(macs, m)
		}
	}
	h := &metalv1.Host{
		TypeMeta:   metav1.TypeMeta{APIVersion: metalv1.GroupVersion.String(), Kind: "Host"},
		ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: ns, Labels: labels},
		Spec: metalv1.HostSpec{
			BMC:          metalv1.BMC{Address: r.BMCAddress, DisableCertificateVerification: r.InsecureTLS},
			BootMACs:     macs,
			Architecture: r.Architecture,
			BootMode:     r.BootMode,
		},
	}
	if !strings.HasPrefix(r.BMCAddress, "manual:") {
		h.Spec.BMC.CredentialsName = SecretName(r.Name)
	}
	if r.Address != "" || r.Gateway != "" {
		h.Spec.Network = &metalv1.HostNetwork{Address: r.Address, Gateway: r.Gateway}
	}
	return h
}

// ImportOptions tune Import.
type ImportOptions struct {
	Namespace string
	DryRun    bool // server-side dry run: the API validates, nothing is stored
	Workers   int
	// Progress is called after each Host; it must not print secrets (it gets none).
	Progress func(done, total int)
}

// ImportResult counts what Import did.
type ImportResult struct {
	Applied int
}

// Import validates every row against the file and the cluster, and only when
// all rows are good applies a Host and its credentials Secret per row.
// Server-side apply makes a re-run after a partial failure safe.
func Import(ctx context.Context, c client.Client, rows []ImportRow, o ImportOptions) (ImportResult, error) {
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	var existing metalv1.HostList
	if err := c.List(ctx, &existing); err != nil {
		return ImportResult{}, fmt.Errorf("listing existing Hosts: %w", err)
	}
	if errs := ValidateRows(rows, o.Namespace, existing.Items); len(errs) > 0 {
		return ImportResult{}, errs
	}
	if o.Workers <= 0 {
		o.Workers = 8
	}
	opts := applyOptions{
		patch: []client.PatchOption{client.FieldOwner("anvil-import"), client.ForceOwnership},
		apply: []client.ApplyOption{client.FieldOwner("anvil-import"), client.ForceOwnership},
	}
	if o.DryRun {
		opts.patch = append(opts.patch, client.DryRunAll)
		opts.apply = append(opts.apply, client.DryRunAll)
	}
	work := make(chan ImportRow)
	var (
		mu      sync.Mutex
		done    int
		errs    RowErrors
		wg      sync.WaitGroup
		applied int
	)
	for range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				err := applyRow(ctx, c, r, o.Namespace, opts)
				mu.Lock()
				done++
				if err != nil {
					errs = append(errs, RowError{Line: r.Line, Name: r.Name, Reason: err.Error()})
				} else {
					applied++
				}
				if o.Progress != nil {
					o.Progress(done, len(rows))
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range rows {
		work <- r
	}
	close(work)
	wg.Wait()
	sort.Slice(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	if len(errs) > 0 {
		return ImportResult{Applied: applied}, fmt.Errorf("the API rejected %d row(s) (%d applied; re-running the import is safe):\n%w", len(errs), applied, errs)
	}
	return ImportResult{Applied: applied}, nil
}

// applyOptions are the same options for both ways of applying: the Host has
// no apply configuration (a typed server-side apply patch), the Secret has one.
type applyOptions struct {
	patch []client.PatchOption
	apply []client.ApplyOption
}

func applyRow(ctx context.Context, c client.Client, r ImportRow, defaultNS string, opts applyOptions) error {
	ns := r.Namespace
	if ns == "" {
		ns = defaultNS
	}
	h := r.host(ns)
	//lint:ignore SA1019 Host has no generated apply configuration; an unstructured one made from h would send the same zero values
	if err := c.Patch(ctx, h, client.Apply, opts.patch...); err != nil {
		return fmt.Errorf("applying Host: %s", redact(err.Error(), r.Password))
	}
	if h.Spec.BMC.CredentialsName == "" {
		return nil
	}
	s := corev1ac.Secret(h.Spec.BMC.CredentialsName, ns).
		WithLabels(map[string]string{"app.kubernetes.io/managed-by": "anvil"}).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{metalv1.CredentialsUsernameKey: []byte(r.Username), metalv1.CredentialsPasswordKey: []byte(r.Password)})
	if h.UID != "" { // deleting the Host collects its Secret
		s.WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion(metalv1.GroupVersion.String()).WithKind("Host").WithName(h.Name).WithUID(h.UID))
	}
	if err := c.Apply(ctx, s, opts.apply...); err != nil {
		return fmt.Errorf("applying Secret %s: %s", h.Spec.BMC.CredentialsName, redact(err.Error(), r.Password))
	}
	return nil
}

// redact removes a secret from a message, in case an API error echoes input.
func redact(msg, secret string) string {
	if secret == "" {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "[redacted]")
}
