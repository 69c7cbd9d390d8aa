package render

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	butane "github.com/coreos/butane/config"
	butanecommon "github.com/coreos/butane/config/common"
	ignerrors "github.com/coreos/ignition/v2/config/shared/errors"
	ignutil "github.com/coreos/ignition/v2/config/util"
	ign30 "github.com/coreos/ignition/v2/config/v3_0"
	ign31 "github.com/coreos/ignition/v2/config/v3_1"
	ign32 "github.com/coreos/ignition/v2/config/v3_2"
	ign33 "github.com/coreos/ignition/v2/config/v3_3"
	ign34 "github.com/coreos/ignition/v2/config/v3_4"
	ign35 "github.com/coreos/ignition/v2/config/v3_5"
	ign36 "github.com/coreos/ignition/v2/config/v3_6"
	ign37exp "github.com/coreos/ignition/v2/config/v3_7_experimental"
	"github.com/coreos/vcontext/report"
	yaml2 "go.yaml.in/yaml/v2"
	"gopkg.in/yaml.v3"
)

// Variant is the kind of template a MachineClass carries.
type Variant string

const (
	// VariantFCOS is a Butane config for Fedora CoreOS ("variant: fcos").
	VariantFCOS Variant = "fcos"
	// VariantFlatcar is a Butane config for Flatcar ("variant: flatcar").
	VariantFlatcar Variant = "flatcar"
	// VariantIgnition is a raw Ignition JSON config (spec 3.x).
	VariantIgnition Variant = "ignition"
	// VariantCloudInit is a set of cloud-init NoCloud files (see NoCloudTemplates).
	VariantCloudInit Variant = "cloud-init"
)

// butaneVersions lists the stable Butane spec versions per variant in
// github.com/coreos/butane v0.29.0 (config/config.go), with the Ignition spec
// each one produces. Experimental versions are accepted only with
// RenderOptions.AllowExperimental because their schema may still change.
var butaneVersions = map[Variant]map[string]string{
	VariantFCOS: {
		"1.0.0": "3.0.0", "1.1.0": "3.1.0", "1.2.0": "3.2.0", "1.3.0": "3.2.0",
		"1.4.0": "3.3.0", "1.5.0": "3.4.0", "1.6.0": "3.5.0", "1.7.0": "3.6.0",
		"1.8.0-experimental": "3.7.0-experimental",
	},
	VariantFlatcar: {
		"1.0.0": "3.3.0", "1.1.0": "3.4.0",
		"1.2.0-experimental": "3.7.0-experimental",
	},
}

// IgnitionParser returns Ignition's own validator of configs of exactly
// spec version (e.g. "3.4.0"); experimental versions only if asked.
func IgnitionParser(version string, experimental bool) (func([]byte) (report.Report, error), bool) {
	parse, ok := ignitionParsers[version]
	if !ok || (!experimental && strings.Contains(version, "-")) {
		return nil, false
	}
	return parse, true
}

// ignitionParsers validates an Ignition config of exactly one spec version.
var ignitionParsers = map[string]func([]byte) (report.Report, error){
	"3.0.0": func(b []byte) (report.Report, error) { _, r, err := ign30.Parse(b); return r, err },
	"3.1.0": func(b []byte) (report.Report, error) { _, r, err := ign31.Parse(b); return r, err },
	"3.2.0": func(b []byte) (report.Report, error) { _, r, err := ign32.Parse(b); return r, err },
	"3.3.0": func(b []byte) (report.Report, error) { _, r, err := ign33.Parse(b); return r, err },
	"3.4.0": func(b []byte) (report.Report, error) { _, r, err := ign34.Parse(b); return r, err },
	"3.5.0": func(b []byte) (report.Report, error) { _, r, err := ign35.Parse(b); return r, err },
	"3.6.0": func(b []byte) (report.Report, error) { _, r, err := ign36.Parse(b); return r, err },
	"3.7.0-experimental": func(b []byte) (report.Report, error) {
		_, r, err := ign37exp.Parse(b)
		return r, err
	},
}

// ButaneVersions returns the Butane spec versions accepted for variant,
// sorted, with experimental ones only when allowExperimental is set.
func ButaneVersions(variant Variant, allowExperimental bool) []string {
	var out []string
	for v := range butaneVersions[variant] {
		if strings.Contains(v, "experimental") && !allowExperimental {
			continue
		}
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// RenderOptions tune rendering and validation.
type RenderOptions struct {
	// Strict turns Butane and Ignition warnings into errors (fatal entries
	// are always errors).
	Strict bool
	// AllowExperimental accepts experimental Butane/Ignition spec versions.
	AllowExperimental bool
	// MaxOutputBytes bounds a rendered template; DefaultMaxOutputBytes if 0.
	MaxOutputBytes int
}

// RenderIgnition executes tmpl with vars and returns a validated Ignition
// JSON config. variant is VariantFCOS or VariantFlatcar (tmpl is Butane YAML
// and must declare the same variant) or VariantIgnition (tmpl is Ignition
// JSON). Failures are *TemplateError. RenderIgnition has no cache; see Renderer.
func RenderIgnition(tmpl string, variant Variant, vars Vars, opts RenderOptions) ([]byte, error) {
	sc := newScrubber(&vars)
	out, terr := renderIgnition(tmpl, variant, &vars, opts, sc)
	if terr != nil {
		return nil, terr
	}
	return out, nil
}

func renderIgnition(tmpl string, variant Variant, vars *Vars, opts RenderOptions, sc scrubber) ([]byte, *TemplateError) {
	switch variant {
	case VariantFCOS, VariantFlatcar, VariantIgnition:
	default:
		return nil, sc.newError(StageTemplate, fmt.Sprintf("variant %q is not an Ignition variant (want %q, %q or %q)", variant, VariantFCOS, VariantFlatcar, VariantIgnition))
	}
	rendered, terr := executeTemplate(tmpl, vars, opts.MaxOutputBytes, sc)
	if terr != nil {
		return nil, terr
	}
	ign := rendered
	if variant != VariantIgnition {
		ign, terr = translateButane(tmpl, rendered, variant, opts, sc)
		if terr != nil {
			return nil, terr
		}
	}
	if terr := validateIgnition(tmpl, ign, variant == VariantIgnition, opts, sc); terr != nil {
		return nil, terr
	}
	return ign, nil
}

// yamlLineRe finds the line yaml.v3 names in its messages ("yaml: line 7: ...").
var yamlLineRe = regexp.MustCompile(`\bline (\d+)\b`)

func translateButane(tmpl string, rendered []byte, variant Variant, opts RenderOptions, sc scrubber) ([]byte, *TemplateError) {
	lm := newLineMap(tmpl, string(rendered))

	// Check variant and version ourselves first: Butane would happily
	// translate an fcos config handed to a Flatcar class.
	var head struct {
		Variant string `yaml:"variant"`
		Version string `yaml:"version"`
	}
	if err := yaml.Unmarshal(rendered, &head); err != nil {
		return nil, yamlError(StageButane, "", err.Error(), rendered, lm, sc)
	}
	if head.Variant != string(variant) {
		te := sc.newError(StageButane, fmt.Sprintf("template declares variant %q, but the machine class expects %q", head.Variant, variant))
		lm.locate(te, findKeyLine(rendered, "variant"), 0)
		return nil, te
	}
	if _, ok := butaneVersions[variant][head.Version]; !ok || (strings.Contains(head.Version, "experimental") && !opts.AllowExperimental) {
		te := sc.newError(StageButane, fmt.Sprintf("unsupported %s Butane version %q (supported: %s)", variant, head.Version, strings.Join(ButaneVersions(variant, opts.AllowExperimental), ", ")))
		lm.locate(te, findKeyLine(rendered, "version"), 0)
		return nil, te
	}

	// FilesDir stays empty: templates may not read local files of the
	// service ("local:" references fail).
	out, rpt, err := butane.TranslateBytes(rendered, butanecommon.TranslateBytesOptions{})
	if te := reportError(StageButane, rpt, opts.Strict, lm, sc); te != nil {
		return nil, te
	}
	if err != nil {
		var um butanecommon.ErrUnmarshal
		if errors.As(err, &um) {
			return nil, yamlError(StageButane, "", um.Detail, rendered, lm, sc)
		}
		// Butane's own unmarshal reports yaml.v3 errors unwrapped.
		return nil, yamlError(StageButane, "", err.Error(), rendered, lm, sc)
	}
	return out, nil
}

// findKeyLine returns the 1-based line of a top-level key, or 0.
func findKeyLine(doc []byte, key string) int {
	for i, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, key+":") {
			return i + 1
		}
	}
	return 0
}

// yamlError builds an error from a YAML parser message found when parsing
// doc, locating the line it names.
func yamlError(stage Stage, part, detail string, doc []byte, lm *lineMap, sc scrubber) *TemplateError {
	detail = strings.TrimPrefix(detail, "yaml: ")
	line := 0
	if m := yamlLineRe.FindStringSubmatch(detail); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	reason := detail
	if m := yamlSyntaxRe.FindStringSubmatch(detail); m != nil {
		// A syntax error: "line N: problem".
		reason = m[2]
		if l, ctx := yamlProblemLine(doc, line, m[2]); l != line {
			line = l
			if t, _ := lm.templatePos(ctx, 0); t > 0 {
				reason = fmt.Sprintf("%s (in the block that starts at line %d)", reason, t)
			}
		}
	} else {
		// "unmarshal errors:\n  line 6: cannot unmarshal ..." -> one line.
		reason = strings.Join(strings.Fields(strings.ReplaceAll(detail, "unmarshal errors:\n", "")), " ")
		if line > 0 {
			reason = strings.TrimPrefix(reason, "line "+strconv.Itoa(line)+": ")
		}
	}
	te := sc.newError(stage, reason)
	te.Part = part
	if line > 0 {
		lm.locate(te, line, 0)
	}
	return te
}

var yamlSyntaxRe = regexp.MustCompile(`^line (\d+): ([^\n]*)$`)

// yamlProblemLine finds where a YAML syntax error really is. yaml.v3 (used by
// Butane and by us) names the line where the enclosing block starts (libyaml's
// "context mark"), which for a mis-indented key can be far above the culprit.
// yaml.v2 names the "problem mark" instead, 0-based for parser errors (a
// long-standing off-by-one), so for those it is shifted by one. It returns the
// problem line and the context line.
func yamlProblemLine(doc []byte, v3Line int, problem string) (line, context int) {
	if !strings.HasPrefix(problem, "did not find expected") {
		return v3Line, v3Line
	}
	var v any
	err := yaml2.Unmarshal(doc, &v)
	if err == nil {
		return v3Line, v3Line
	}
	m := yamlSyntaxRe.FindStringSubmatch(strings.TrimPrefix(err.Error(), "yaml: "))
	if m == nil || m[2] != problem {
		return v3Line, v3Line
	}
	l, _ := strconv.Atoi(m[1])
	if l+1 > v3Line {
		return l + 1, v3Line
	}
	return v3Line, v3Line
}

// reportError returns the first fatal entry of rpt (or warning, if strict)
// as a TemplateError; nil if there is none.
func reportError(stage Stage, rpt report.Report, strict bool, lm *lineMap, sc scrubber) *TemplateError {
	var bad []report.Entry
	for _, e := range rpt.Entries {
		if e.Kind.IsFatal() || (strict && e.Kind == report.Warn) {
			bad = append(bad, e)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	e := bad[0]
	reason := e.Message
	if e.Context.Len() > 0 {
		reason = e.Context.String() + ": " + reason
	}
	if !e.Kind.IsFatal() {
		reason = "warning (strict mode): " + reason
	}
	if len(bad) > 1 {
		reason += fmt.Sprintf(" (and %d more)", len(bad)-1)
	}
	te := sc.newError(stage, reason)
	if e.Marker.StartP != nil {
		line, col := int(e.Marker.StartP.Line), int(e.Marker.StartP.Column)
		if lm != nil {
			lm.locate(te, line, col)
		} else {
			te.RenderedLine, te.RenderedColumn = line, col
		}
	}
	return te
}

// validateIgnition parses ign with the Ignition config library for its exact
// spec version. fromTemplate is set when ign is the rendered template itself
// (VariantIgnition), so positions map back to template lines.
func validateIgnition(tmpl string, ign []byte, fromTemplate bool, opts RenderOptions, sc scrubber) *TemplateError {
	var lm *lineMap
	if fromTemplate {
		lm = newLineMap(tmpl, string(ign))
	}
	ver, rpt, err := ignutil.GetConfigVersion(ign)
	if err != nil {
		if te := reportError(StageIgnition, rpt, opts.Strict, lm, sc); te != nil {
			return te
		}
		return sc.newError(StageIgnition, err.Error())
	}
	parse, ok := ignitionParsers[ver.String()]
	if !ok || (ver.PreRelease != "" && !opts.AllowExperimental) {
		return sc.newError(StageIgnition, fmt.Sprintf("unsupported Ignition spec version %q", ver.String()))
	}
	rpt, err = parse(ign)
	if te := reportError(StageIgnition, rpt, opts.Strict, lm, sc); te != nil {
		return te
	}
	if err != nil {
		if errors.Is(err, ignerrors.ErrUnknownVersion) {
			return sc.newError(StageIgnition, fmt.Sprintf("unsupported Ignition spec version %q", ver.String()))
		}
		return sc.newError(StageIgnition, err.Error())
	}
	return nil
}
