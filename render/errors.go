package render

import (
	"fmt"
	"sort"
	"strings"
)

// Stage names the step of rendering that failed.
type Stage string

const (
	// StageTemplate: parsing or executing the text/template.
	StageTemplate Stage = "template"
	// StageButane: the rendered Butane YAML was rejected by Butane.
	StageButane Stage = "butane"
	// StageIgnition: the resulting Ignition JSON was rejected by the Ignition
	// config parser.
	StageIgnition Stage = "ignition"
	// StageCloudInit: a rendered cloud-init NoCloud file is malformed.
	StageCloudInit Stage = "cloud-init"
)

// TemplateError is the only error type rendering returns for problems in the
// template or its output. Its Error() text is meant to be copied verbatim into
// a MachineClass condition message; it never contains secret variable values.
type TemplateError struct {
	Stage Stage
	// Part names the NoCloud file ("user-data", "vendor-data",
	// "network-config") for cloud-init templates; empty for Ignition.
	Part string
	// Line and Column locate the problem in the template source (1-based;
	// 0 means unknown). For butane and cloud-init errors the position found
	// in the rendered document is mapped back to the template line that
	// produced it; Column is only kept when that line rendered verbatim.
	Line, Column int
	// RenderedLine and RenderedColumn locate the problem in the rendered
	// document (the Butane YAML, the cloud-init file, or for StageIgnition the
	// Ignition JSON). 0 means unknown or not applicable.
	RenderedLine, RenderedColumn int
	// Reason says what is wrong, scrubbed of secrets.
	Reason string
}

func (e *TemplateError) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Stage))
	if e.Part != "" {
		b.WriteString(" ")
		b.WriteString(e.Part)
	}
	switch {
	case e.Line > 0 && e.Column > 0:
		fmt.Fprintf(&b, ": line %d, column %d", e.Line, e.Column)
	case e.Line > 0:
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	if e.RenderedLine > 0 && (e.RenderedLine != e.Line || e.Line == 0) {
		what := "rendered"
		if e.Stage == StageIgnition {
			what = "ignition JSON"
		}
		if e.RenderedColumn > 0 {
			fmt.Fprintf(&b, " (%s line %d, column %d)", what, e.RenderedLine, e.RenderedColumn)
		} else {
			fmt.Fprintf(&b, " (%s line %d)", what, e.RenderedLine)
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// scrubber removes secret values, and fragments of them, from error texts.
type scrubber struct {
	secrets []string
}

const (
	redacted = "[REDACTED]"
	// minFragment is the shortest run of a secret that is treated as a leak.
	// Parsers truncate values they quote (yaml.v3 keeps 7 characters), so
	// exact matching alone is not enough.
	minFragment = 6
)

func newScrubber(v *Vars) scrubber {
	s := v.secrets()
	// Longest first, so that an encoding containing another is replaced whole.
	sort.Slice(s, func(i, j int) bool { return len(s[i]) > len(s[j]) })
	return scrubber{secrets: s}
}

func (s scrubber) scrub(msg string) string {
	if len(s.secrets) == 0 || msg == "" {
		return msg
	}
	for _, sec := range s.secrets {
		// Very short "secrets" would garble every message; anything a real
		// secret looks like is far longer.
		if len(sec) >= 4 {
			msg = strings.ReplaceAll(msg, sec, redacted)
		}
	}
	// Fragments: mark every byte of msg covered by a common substring of at
	// least minFragment bytes with any secret. Messages and secrets are short
	// (hundreds of bytes), so the quadratic scan is cheap, and it only runs on
	// the error path.
	mark := make([]bool, len(msg))
	any := false
	for _, sec := range s.secrets {
		if len(sec) < minFragment {
			continue
		}
		for i := 0; i+minFragment <= len(msg); i++ {
			for j := 0; j+minFragment <= len(sec); j++ {
				n := 0
				for i+n < len(msg) && j+n < len(sec) && msg[i+n] == sec[j+n] {
					n++
				}
				if n >= minFragment {
					for k := i; k < i+n; k++ {
						mark[k] = true
					}
					any = true
				}
			}
		}
	}
	if !any {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		if !mark[i] {
			b.WriteByte(msg[i])
			i++
			continue
		}
		for i < len(msg) && mark[i] {
			i++
		}
		b.WriteString(redacted)
	}
	return b.String()
}

// newError builds a scrubbed TemplateError.
func (s scrubber) newError(stage Stage, reason string) *TemplateError {
	return &TemplateError{Stage: stage, Reason: s.scrub(reason)}
}

// lineMap maps lines of a rendered document back to the template lines that
// produced them. Lines without template actions render verbatim; lines with
// actions keep their static text before the first and after the last action.
// A weighted longest common subsequence aligns the two line lists, where a
// verbatim match weighs 2 and a match of the static prefix/suffix weighs 1.
// A rendered line left unaligned (more output lines of a multi-line action)
// is attributed to the template line(s) between its aligned neighbours.
type lineMap struct {
	tmpl     []string
	rendered []string
	// match[r] = template line index (0-based) for rendered line r, or -1.
	match []int
	// exact[r] is set when rendered line r is a verbatim template line.
	exact []bool
	// aligned is false when the documents were too large to align.
	aligned bool
}

// maxLCSCells bounds the alignment table (uint16 cells, so 8 MiB at most).
const maxLCSCells = 4 << 20

// staticParts returns the text of a template line outside actions, or
// ok=false for lines without actions.
func staticParts(line string) (prefix, suffix string, ok bool) {
	i := strings.Index(line, "{{")
	if i < 0 {
		return "", "", false
	}
	prefix = line[:i]
	if j := strings.LastIndex(line, "}}"); j > i {
		suffix = line[j+2:]
	}
	return prefix, suffix, true
}

func newLineMap(tmpl, rendered string) *lineMap {
	m := &lineMap{tmpl: strings.Split(tmpl, "\n"), rendered: strings.Split(rendered, "\n")}
	n, r := len(m.tmpl), len(m.rendered)
	m.match = make([]int, r)
	m.exact = make([]bool, r)
	for i := range m.match {
		m.match[i] = -1
	}
	if n*r > maxLCSCells || n > 30000 || r > 30000 {
		return m
	}
	m.aligned = true
	type static struct {
		prefix, suffix string
		ok             bool
	}
	st := make([]static, n)
	for i, l := range m.tmpl {
		st[i].prefix, st[i].suffix, st[i].ok = staticParts(l)
	}
	weight := func(i, j int) uint16 {
		t, rl := m.tmpl[i], m.rendered[j]
		if t == rl {
			return 2
		}
		if s := st[i]; s.ok && len(rl) >= len(s.prefix)+len(s.suffix) &&
			strings.HasPrefix(rl, s.prefix) && strings.HasSuffix(rl, s.suffix) {
			return 1
		}
		return 0
	}
	// dp[i][j] = best weight aligning tmpl[i:] with rendered[j:].
	w := r + 1
	dp := make([]uint16, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := r - 1; j >= 0; j-- {
			best := dp[(i+1)*w+j]
			if b := dp[i*w+j+1]; b > best {
				best = b
			}
			if wt := weight(i, j); wt > 0 && dp[(i+1)*w+j+1]+wt > best {
				best = dp[(i+1)*w+j+1] + wt
			}
			dp[i*w+j] = best
		}
	}
	// Trace back, preferring a match as early as possible so that the first
	// output line of a multi-line action is the one aligned with it.
	for i, j := 0, 0; i < n && j < r; {
		if wt := weight(i, j); wt > 0 && dp[i*w+j] == dp[(i+1)*w+j+1]+wt {
			m.match[j] = i
			m.exact[j] = wt == 2
			i++
			j++
			continue
		}
		if dp[(i+1)*w+j] >= dp[i*w+j+1] {
			i++
		} else {
			j++
		}
	}
	return m
}

// templatePos maps a 1-based rendered position to a template position.
// The column survives only when the rendered line is a verbatim template line.
func (m *lineMap) templatePos(line, col int) (int, int) {
	if line < 1 || line > len(m.rendered) {
		return 0, 0
	}
	r := line - 1
	if t := m.match[r]; t >= 0 {
		if m.exact[r] {
			return t + 1, col
		}
		return t + 1, 0
	}
	if !m.aligned {
		// Too large to align: give up rather than guess.
		return 0, 0
	}
	// Anchors around r.
	lo := -1
	for k := r - 1; k >= 0; k-- {
		if m.match[k] >= 0 {
			lo = m.match[k]
			break
		}
	}
	hi := len(m.tmpl)
	for k := r + 1; k < len(m.match); k++ {
		if m.match[k] >= 0 {
			hi = m.match[k]
			break
		}
	}
	if hi-lo <= 1 {
		// No template line in between: the text came from an action on the
		// anchor line itself (e.g. a multi-line value inlined at its end).
		if lo >= 0 {
			return lo + 1, 0
		}
		return 1, 0
	}
	for t := lo + 1; t < hi; t++ {
		if strings.Contains(m.tmpl[t], "{{") {
			return t + 1, 0
		}
	}
	return lo + 2, 0
}

// locate fills in template and rendered positions on e.
func (m *lineMap) locate(e *TemplateError, line, col int) {
	e.RenderedLine, e.RenderedColumn = line, col
	e.Line, e.Column = m.templatePos(line, col)
}
