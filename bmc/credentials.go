package bmc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

const redacted = "[REDACTED]"

// Credentials for a BMC. Every way of printing or marshalling them (String,
// GoString, fmt verbs, JSON, logr) hides the password.
type Credentials struct {
	Username string
	Password string
}

// String implements fmt.Stringer without the password.
func (c Credentials) String() string {
	pw := ""
	if c.Password != "" {
		pw = redacted
	}
	return fmt.Sprintf("{Username:%s Password:%s}", c.Username, pw)
}

// GoString implements fmt.GoStringer without the password.
func (c Credentials) GoString() string {
	pw := `""`
	if c.Password != "" {
		pw = `"` + redacted + `"`
	}
	return fmt.Sprintf("bmc.Credentials{Username:%q, Password:%s}", c.Username, pw)
}

// Format implements fmt.Formatter so that no verb (%v, %+v, %#v, %s, %q, %x)
// can print the password.
func (c Credentials) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		_, _ = fmt.Fprint(f, c.GoString())
	case verb == 'q':
		_, _ = fmt.Fprintf(f, "%q", c.String())
	default:
		_, _ = fmt.Fprint(f, c.String())
	}
}

// MarshalJSON keeps the password out of JSON (for example when someone logs
// an Options value with a JSON logger).
func (c Credentials) MarshalJSON() ([]byte, error) {
	pw := ""
	if c.Password != "" {
		pw = redacted
	}
	return []byte(fmt.Sprintf(`{"username":%q,"password":%q}`, c.Username, pw)), nil
}

// MarshalLog implements logr.Marshaler.
func (c Credentials) MarshalLog() any {
	return c.String()
}

// Fingerprint is a stable digest of the credentials, for cache keys. It is a
// hash, so it can sit in memory and maps without exposing the password.
func (c Credentials) Fingerprint() string {
	h := sha256.New()
	_, _ = h.Write([]byte("anvil-bmc-credentials\x00"))
	_, _ = h.Write([]byte(c.Username))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(c.Password))
	return hex.EncodeToString(h.Sum(nil))
}
