package main

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"anvil.dev/anvil/bench/internal/results"
)

// mergeCmd copies parts of one results file into another, as `run --merge`
// does for the parts it ran: for a measurement made with --out and checked
// before it is published.
func mergeCmd(args []string) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	in := fs.String("in", "", "results file to take the parts from")
	into := fs.String("into", "bench/results.json", "results file to update (its other parts are kept)")
	only := fs.String("only", "", "comma-separated parts to copy, e.g. scale,rollout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *only == "" {
		return errors.New("merge: --in and --only are required")
	}
	r, err := results.Read(*in)
	if err != nil {
		return err
	}
	var parts []string
	for _, p := range strings.Split(*only, ",") {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	sort.Strings(parts)
	sel, err := selectParts(r, parts)
	if err != nil {
		return err
	}
	if err := results.Merge(*into, sel); err != nil {
		return err
	}
	fmt.Printf("merged %s from %s into %s\n", strings.Join(parts, ","), *in, *into)
	return nil
}

// selectParts returns a Run holding only r's benchmark parts named (by
// their JSON keys), so Merge replaces exactly those.
func selectParts(r *results.Run, parts []string) (*results.Run, error) {
	// The header goes along: it says when the parts were measured.
	out := &results.Run{Smoke: r.Smoke, Started: r.Started, Finished: r.Finished, Command: r.Command, LoadStart: r.LoadStart, LoadEnd: r.LoadEnd}
	src, dst := reflect.ValueOf(r).Elem(), reflect.ValueOf(out).Elem()
	for _, p := range parts {
		found := false
		for i := range src.NumField() {
			f := src.Type().Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if key == p && f.Type.Kind() == reflect.Pointer {
				if src.Field(i).IsNil() {
					return nil, fmt.Errorf("merge: the input has no %q part", p)
				}
				dst.Field(i).Set(src.Field(i))
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("merge: no benchmark part %q", p)
		}
	}
	return out, nil
}
