package bmc

import (
	"errors"
	"strings"
)

// Error kinds. Test with errors.Is; every driver error of a known kind is an
// *Error whose Kind is one of these.
var (
	// ErrUnreachable: the BMC did not answer (connection refused or reset,
	// timeout, TLS failure, persistent 503). Usually transient.
	ErrUnreachable = errors.New("BMC unreachable")
	// ErrAuthFailed: the BMC rejected the credentials. Not retried by the
	// drivers; fix the Secret.
	ErrAuthFailed = errors.New("BMC authentication failed")
	// ErrUnsupported: the BMC cannot do what was asked (no such reset type,
	// boot target not allowed, several systems and none chosen, ...).
	ErrUnsupported = errors.New("operation not supported by BMC")
	// ErrInvalidAddress: the BMC address is malformed, has an unknown scheme,
	// carries credentials, or names a system that does not exist.
	ErrInvalidAddress = errors.New("invalid BMC address")
	// ErrManualActionRequired: a manual:// host; a human has to perform the
	// action (see ManualActionOf) and acknowledge it.
	ErrManualActionRequired = errors.New("manual action required")
)

// ManualAction is the action a human must perform for a manual:// host.
// Exactly one field is set.
type ManualAction struct {
	Power PowerAction `json:"power,omitempty"`
	Boot  BootDevice  `json:"boot,omitempty"`
}

// String describes the action for events and conditions.
func (m ManualAction) String() string {
	switch {
	case m.Power != "":
		return "power " + string(m.Power)
	case m.Boot != "":
		return "boot once from " + string(m.Boot)
	default:
		return "nothing"
	}
}

// Error is the error type drivers return.
type Error struct {
	// Kind is one of the Err* sentinels, or nil for other failures (for
	// example an HTTP 500 from the BMC).
	Kind error
	// Op is what was being done ("power On", "read power state", ...).
	Op string
	// Address is the BMC address (never with credentials: those are rejected).
	Address string
	// Manual is set for ErrManualActionRequired.
	Manual *ManualAction
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("bmc")
	if e.Address != "" {
		b.WriteString(" ")
		b.WriteString(e.Address)
	}
	if e.Op != "" {
		b.WriteString(": ")
		b.WriteString(e.Op)
	}
	if e.Kind != nil {
		b.WriteString(": ")
		b.WriteString(e.Kind.Error())
	}
	if e.Manual != nil {
		b.WriteString(": ")
		b.WriteString(e.Manual.String())
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes both the kind and the cause to errors.Is/As.
func (e *Error) Unwrap() []error {
	out := make([]error, 0, 2)
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// ManualActionOf returns the action carried by an ErrManualActionRequired
// error.
func ManualActionOf(err error) (ManualAction, bool) {
	var e *Error
	for err != nil {
		if !errors.As(err, &e) {
			return ManualAction{}, false
		}
		if e.Manual != nil {
			return *e.Manual, true
		}
		err = e.Err
	}
	return ManualAction{}, false
}

// KindOf returns the sentinel kind of err (ErrUnreachable, ...) or nil.
func KindOf(err error) error {
	for _, k := range []error{ErrManualActionRequired, ErrAuthFailed, ErrInvalidAddress, ErrUnsupported, ErrUnreachable} {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

// Redact returns err with every occurrence of secret in its message replaced.
// Drivers never put passwords into errors; this is the second line of defence
// against a BMC or library echoing one back. Secrets shorter than 3 bytes are
// left alone (replacing them would garble messages and hide nothing).
// errors.Is/As still see the original chain.
func Redact(err error, secret string) error {
	if err == nil || len(secret) < 3 || !strings.Contains(err.Error(), secret) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), secret, redacted), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (r *redactedError) Error() string { return r.msg }
func (r *redactedError) Unwrap() error { return r.err }
