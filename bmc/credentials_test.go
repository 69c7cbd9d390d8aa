package bmc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
)

const testSecret = "Pa55-w0rd-That-Must-Not-Leak"

func TestCredentialsNeverPrintPassword(t *testing.T) {
	c := Credentials{Username: "admin", Password: testSecret}
	opts := Options{Address: "ipmi://10.0.0.1", Credentials: c}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10v"} {
		for name, v := range map[string]any{"credentials": c, "options": opts, "pointer to options": &opts} {
			out := fmt.Sprintf(verb, v)
			if strings.Contains(out, testSecret) {
				t.Errorf("fmt %s of %s leaks the password: %s", verb, name, out)
			}
		}
	}
	if s := c.String(); !strings.Contains(s, "admin") || !strings.Contains(s, redacted) {
		t.Errorf("String() = %q: want the user name and %s", s, redacted)
	}
	if s := (Credentials{Username: "u"}).String(); strings.Contains(s, redacted) {
		t.Errorf("empty password shown as redacted: %q", s)
	}
	j, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(j, []byte(testSecret)) {
		t.Errorf("JSON leaks the password: %s", j)
	}
	var logs strings.Builder
	log := funcr.New(func(prefix, args string) { logs.WriteString(args) }, funcr.Options{})
	log.Info("opening", "credentials", c, "options", opts)
	if strings.Contains(logs.String(), testSecret) || !strings.Contains(logs.String(), "admin") {
		t.Errorf("log output %q", logs.String())
	}
}

func TestCredentialsFingerprint(t *testing.T) {
	a := Credentials{Username: "admin", Password: "one"}
	b := Credentials{Username: "admin", Password: "two"}
	// The separator matters: ("ab","c") and ("a","bc") differ.
	c1, c2 := Credentials{Username: "ab", Password: "c"}, Credentials{Username: "a", Password: "bc"}
	if a.Fingerprint() == b.Fingerprint() || c1.Fingerprint() == c2.Fingerprint() {
		t.Fatal("different credentials, same fingerprint")
	}
	if a.Fingerprint() != (Credentials{Username: "admin", Password: "one"}).Fingerprint() {
		t.Fatal("fingerprint not stable")
	}
	if strings.Contains(a.Fingerprint(), "one") {
		t.Fatal("fingerprint contains the password")
	}
}

func TestErrorKinds(t *testing.T) {
	cause := errors.New("dial tcp 10.0.0.1:443: connect: connection refused")
	err := fmt.Errorf("reconcile: %w", &Error{Kind: ErrUnreachable, Op: "power On", Address: "redfish+https://10.0.0.1", Err: cause})
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, cause) || errors.Is(err, ErrAuthFailed) {
		t.Fatal("errors.Is does not see kind and cause")
	}
	if KindOf(err) != ErrUnreachable || KindOf(cause) != nil {
		t.Fatal("KindOf")
	}
	want := "reconcile: bmc redfish+https://10.0.0.1: power On: BMC unreachable: dial tcp 10.0.0.1:443: connect: connection refused"
	if err.Error() != want {
		t.Fatalf("Error() = %q\nwant      %q", err.Error(), want)
	}

	manual := fmt.Errorf("wrapped: %w", &Error{Kind: ErrManualActionRequired, Op: "power On", Manual: &ManualAction{Power: PowerOn}})
	if a, ok := ManualActionOf(manual); !ok || a.Power != PowerOn || a.String() != "power On" {
		t.Fatalf("ManualActionOf = %+v, %t", a, ok)
	}
	if _, ok := ManualActionOf(err); ok {
		t.Fatal("ManualActionOf found an action in a non-manual error")
	}
}

func TestRedact(t *testing.T) {
	inner := &Error{Kind: ErrAuthFailed, Err: fmt.Errorf("BMC said: bad password %q", testSecret)}
	red := Redact(inner, testSecret)
	if strings.Contains(red.Error(), testSecret) || !strings.Contains(red.Error(), redacted) {
		t.Fatalf("Redact: %q", red)
	}
	if !errors.Is(red, ErrAuthFailed) {
		t.Fatal("Redact lost the error kind")
	}
	plain := errors.New("no secret here")
	if Redact(plain, testSecret) != plain || Redact(nil, testSecret) != nil {
		t.Fatal("Redact changed an error without the secret")
	}
	if got := Redact(errors.New("a b"), "a"); got.Error() != "a b" {
		t.Fatalf("Redact of a 1-byte secret garbled the message: %q", got)
	}
}
