package results

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
)

// Merge writes r into the results file at path, replacing only the parts r
// holds (its non-nil benchmark fields: DHCP, TFTP, HTTP, Render, Storm, ...)
// and keeping everything else the file holds, so one benchmark can be
// rerun without rerunning the others. The file's own header (start,
// machine, load) stays; a part that needs its own header carries it
// (results.Storm does). A missing file is written whole. A smoke run is
// never merged into a full results file or the other way round: the
// report would mix figures meant to be quoted with ones that are not.
func Merge(path string, r *Run) error {
	base, err := Read(path)
	if errors.Is(err, os.ErrNotExist) {
		return Write(path, r)
	}
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if base.Smoke != r.Smoke {
		return fmt.Errorf("merge into %s: will not merge a %s run into a %s results file", path, smokeWord(r.Smoke), smokeWord(base.Smoke))
	}
	parts := copyParts(base, r)
	for _, e := range r.Errors {
		base.Errors = append(base.Errors, "["+strings.Join(parts, ",")+"] "+e)
	}
	return Write(path, base)
}

// copyParts sets dst's benchmark fields (the pointer fields of Run) that
// src has, and returns their JSON names.
func copyParts(dst, src *Run) []string {
	dv, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	var parts []string
	for i := range dv.NumField() {
		f := dv.Type().Field(i)
		if f.Type.Kind() != reflect.Pointer || sv.Field(i).IsNil() {
			continue
		}
		dv.Field(i).Set(sv.Field(i))
		stampPart(dv.Field(i), src)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		parts = append(parts, key)
	}
	return parts
}

func smokeWord(s bool) string {
	if s {
		return "smoke"
	}
	return "full"
}

// stampPart gives a merged part that does not say when it was measured
// the header of the run it comes from, which is when it was: once merged,
// the file's header describes another run.
func stampPart(part reflect.Value, src *Run) {
	f := part.Elem().FieldByName("Measured")
	if !f.IsValid() || !f.IsNil() || src.Started.IsZero() {
		return
	}
	f.Set(reflect.ValueOf(&Measured{Started: src.Started, Finished: src.Finished, Command: src.Command, LoadStart: src.LoadStart, LoadEnd: src.LoadEnd}))
}
