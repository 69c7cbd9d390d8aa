package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"text/template"
)

// FuncMap returns the helper functions available to templates:
//
//	indent N s     prefix every line of s with N spaces
//	nindent N s    a newline followed by indent N s (for YAML block scalars)
//	quote s        s as a JSON string literal, which is also a valid YAML
//	               double-quoted scalar (safe for any content)
//	toJSON v       v encoded as compact JSON
//	b64enc s       standard base64 of s
//	b64dec s       inverse of b64enc
//	sha256sum s    hex SHA-256 of s
//	dataURL s      an RFC 2397 data URL carrying s (base64), for Butane/Ignition "source:"
//	join sep list  strings.Join
//	lower, upper, trimSpace, trimPrefix, trimSuffix, replace, contains, hasPrefix, split
//	default d v    v, or d when v is empty
//	required msg v v, or an error naming msg when v is empty
//
// Argument order follows the pipeline convention: the piped value comes last
// (`{{ .Join.CACertPEM | indent 10 }}`).
func FuncMap() template.FuncMap {
	return template.FuncMap{
		"indent":  indent,
		"nindent": func(n int, s string) string { return "\n" + indent(n, s) },
		"quote":   quote,
		"toJSON":  toJSON,
		"b64enc":  func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"b64dec": func(s string) (string, error) {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				// The base64 error names only an offset, never the input.
				return "", err
			}
			return string(b), nil
		},
		"sha256sum": func(s string) string {
			sum := sha256.Sum256([]byte(s))
			return hex.EncodeToString(sum[:])
		},
		"dataURL": func(s string) string {
			return "data:;base64," + base64.StdEncoding.EncodeToString([]byte(s))
		},
		"join":       func(sep string, elems []string) string { return strings.Join(elems, sep) },
		"lower":      strings.ToLower,
		"upper":      strings.ToUpper,
		"trimSpace":  strings.TrimSpace,
		"trimPrefix": func(prefix, s string) string { return strings.TrimPrefix(s, prefix) },
		"trimSuffix": func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
		"replace":    func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
		"contains":   func(substr, s string) bool { return strings.Contains(s, substr) },
		"hasPrefix":  func(prefix, s string) bool { return strings.HasPrefix(s, prefix) },
		"split":      func(sep, s string) []string { return strings.Split(s, sep) },
		"default":    dflt,
		"required":   required,
	}
}

func indent(n int, s string) string {
	if n < 0 {
		n = 0
	}
	pad := strings.Repeat(" ", n)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		// Do not pad the empty remainder after a trailing newline, so
		// "a\n" | indent 2 stays "  a\n" and YAML block scalars keep their shape.
		if l == "" && i == len(lines)-1 {
			continue
		}
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n")
}

func quote(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		s = fmt.Sprint(v)
	}
	return marshalJSON(s)
}

func toJSON(v any) (string, error) { return marshalJSON(v) }

func marshalJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// json errors name types, not values.
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	default:
		return rv.IsZero()
	}
}

func dflt(d, v any) any {
	if isEmpty(v) {
		return d
	}
	return v
}

func required(msg string, v any) (any, error) {
	if isEmpty(v) {
		return nil, errors.New("required value is empty: " + msg)
	}
	return v, nil
}
