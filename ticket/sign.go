package ticket

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks headers (https://www.standardwebhooks.com).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"

	secretPrefix = "whsec_"
)

// DefaultTolerance is how far a signed timestamp may be from now.
const DefaultTolerance = 5 * time.Minute

// Verification errors. They never carry the secret or a signature.
var (
	ErrUnsigned     = errors.New("request is not signed (webhook-id, webhook-timestamp and webhook-signature are required)")
	ErrStale        = errors.New("webhook-timestamp is outside the tolerance (replayed or clock skew)")
	ErrBadSignature = errors.New("no webhook-signature matches")
)

// Secret is a signing key. It formats as "[redacted]" so it cannot leak
// into logs or errors by accident.
type Secret struct{ key []byte }

// ParseSecret reads "whsec_" followed by the base64 of 24 to 64 random
// bytes. The error never repeats the value.
func ParseSecret(s string) (Secret, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, secretPrefix) {
		return Secret{}, errors.New("signing secret must start with whsec_")
	}
	key, err := base64.StdEncoding.DecodeString(s[len(secretPrefix):])
	if err != nil {
		return Secret{}, errors.New("signing secret is not whsec_ followed by standard base64")
	}
	if len(key) < 24 || len(key) > 64 {
		return Secret{}, errors.New("signing secret must decode to 24 to 64 bytes")
	}
	return Secret{key: key}, nil
}

// NewSecret returns a fresh random secret in the whsec_ form.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

func (Secret) String() string   { return "[redacted]" }
func (Secret) GoString() string { return "[redacted]" }

// Sign returns the webhook-signature value "v1,<base64 HMAC-SHA256 of
// id.timestamp.body>".
func (s Secret) Sign(id string, ts time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(s.mac(id, strconv.FormatInt(ts.Unix(), 10), body))
}

func (s Secret) mac(id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// SignHeaders sets the three webhook headers of one attempt.
func (s Secret) SignHeaders(h http.Header, id string, ts time.Time, body []byte) {
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, s.Sign(id, ts, body))
}

// Verify checks a signed request: all three headers present, timestamp
// within tolerance of now, and one of the space-separated v1 signatures
// matching (constant-time).
func (s Secret) Verify(h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return ErrUnsigned
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrStale
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrStale
	}
	want := s.mac(id, ts, body)
	for _, sig := range strings.Fields(sigs) {
		v, b64, ok := strings.Cut(sig, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrBadSignature
}
