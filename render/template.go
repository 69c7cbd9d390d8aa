package render

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"text/template"
)

// DefaultMaxOutputBytes bounds what one template may render to. Ignition and
// cloud-init configs are kilobytes; a runaway `range` must not eat the
// service's memory.
const DefaultMaxOutputBytes = 8 << 20

// tmplName is the name given to parsed templates; it shows up in
// text/template's messages, which we parse, so it must not contain ':'.
const tmplName = "template"

var (
	// "template: template:12:7: executing "template" at <.X>: reason"
	// "template: template:12: reason" (parse errors carry no column)
	tmplErrRe = regexp.MustCompile(`^template: ` + tmplName + `:(\d+)(?::(\d+))?: (?s)(.*)$`)
	execAtRe  = regexp.MustCompile(`^executing "` + tmplName + `" at (?s)(.*)$`)
	// Other positions inside messages, "template:5" or "template:5:3".
	nameLineRe  = regexp.MustCompile(tmplName + `:(\d+)(:\d+)?`)
	startedAtRe = regexp.MustCompile(`started at ` + tmplName + `:(\d+)`)
)

var errOutputTooLarge = errors.New("rendered output exceeds the size limit")

type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if l.Len()+len(p) > l.max {
		return 0, errOutputTooLarge
	}
	return l.Buffer.Write(p)
}

// executeTemplate parses and runs src against vars. Missing map keys are
// errors (missingkey=error), so a typo in `.Labels.rack` fails instead of
// rendering "<no value>".
func executeTemplate(src string, vars *Vars, maxBytes int, sc scrubber) ([]byte, *TemplateError) {
	t, err := template.New(tmplName).Option("missingkey=error").Funcs(FuncMap()).Parse(src)
	if err != nil {
		return nil, templateError(err, sc)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxOutputBytes
	}
	out := &limitedBuffer{max: maxBytes}
	if err := t.Execute(out, vars); err != nil {
		if errors.Is(err, errOutputTooLarge) {
			return nil, sc.newError(StageTemplate, errOutputTooLarge.Error()+" ("+strconv.Itoa(maxBytes)+" bytes)")
		}
		return nil, templateError(err, sc)
	}
	return out.Bytes(), nil
}

// templateError turns a text/template error into a TemplateError with the
// line and column split out.
func templateError(err error, sc scrubber) *TemplateError {
	msg := err.Error()
	te := &TemplateError{Stage: StageTemplate}
	if m := tmplErrRe.FindStringSubmatch(msg); m != nil {
		te.Line, _ = strconv.Atoi(m[1])
		if m[2] != "" {
			te.Column, _ = strconv.Atoi(m[2])
		}
		msg = m[3]
		if a := execAtRe.FindStringSubmatch(msg); a != nil {
			msg = a[1]
		}
		if te.Column > 0 || m[2] == "0" {
			te.Column++ // text/template counts columns from 0
		}
		// "unclosed action started at template:5": the start is what the
		// author needs to look at, not the end of the file.
		if s := startedAtRe.FindStringSubmatch(msg); s != nil {
			te.Line, _ = strconv.Atoi(s[1])
			te.Column = 0
		}
		msg = nameLineRe.ReplaceAllString(msg, "line $1")
	}
	msg = strings.TrimSpace(msg)
	te.Reason = sc.scrub(msg)
	return te
}
