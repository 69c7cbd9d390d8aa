package agent

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// credentialSecretBytes is the entropy of the secret part of a credential.
const credentialSecretBytes = 32

// ErrMalformedCredential is returned for a credential or Authorization
// header that does not have the form "<hostUID>.<secret>". It carries no
// part of the input.
var ErrMalformedCredential = errors.New("malformed agent credential")

// NewCredential mints a credential for the Host with the given UID:
// "<hostUID>.<secret>", where secret is 32 random bytes, base64url without
// padding. The credential goes into the host's rendered config and nowhere
// else; store only CredentialHash(credential) (Host.status.agent.credentialHash).
// A nil r uses crypto/rand.
func NewCredential(r io.Reader, hostUID string) (credential, hash string, err error) {
	if !validUID(hostUID) {
		return "", "", fmt.Errorf("minting agent credential: host UID %q is not valid", truncate(hostUID, 64))
	}
	if r == nil {
		r = rand.Reader
	}
	raw := make([]byte, credentialSecretBytes)
	if _, err := io.ReadFull(r, raw); err != nil {
		return "", "", fmt.Errorf("minting agent credential: %w", err)
	}
	credential = hostUID + "." + base64.RawURLEncoding.EncodeToString(raw)
	return credential, CredentialHash(credential), nil
}

// CredentialHash is the hex SHA-256 of the whole credential string, the
// value kept in Host.status.agent.credentialHash.
func CredentialHash(credential string) string {
	sum := sha256.Sum256([]byte(credential))
	return hex.EncodeToString(sum[:])
}

// HostUID returns the host UID part of a credential.
func HostUID(credential string) (string, error) {
	uid, secret, ok := strings.Cut(credential, ".")
	if !ok || !validUID(uid) || secret == "" || len(secret) > 128 {
		return "", ErrMalformedCredential
	}
	return uid, nil
}

// CredentialFromRequest extracts the credential from "Authorization:
// Bearer <credential>".
func CredentialFromRequest(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", ErrMalformedCredential
	}
	cred = strings.TrimSpace(cred)
	if _, err := HostUID(cred); err != nil {
		return "", err
	}
	return cred, nil
}

// CredentialMatches compares a presented credential with a stored hash in
// constant time (with respect to the credential's content).
func CredentialMatches(credential, storedHash string) bool {
	got := CredentialHash(credential)
	// Compare the hex forms; both are 64 bytes when storedHash is well-formed.
	// An empty or malformed stored hash never matches.
	if len(storedHash) != len(got) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(strings.ToLower(storedHash))) == 1
}

// validUID accepts Kubernetes UIDs (RFC 4122 text form) and other short
// identifiers without dots or separators.
func validUID(uid string) bool {
	if uid == "" || len(uid) > 64 {
		return false
	}
	for _, r := range uid {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '-':
		default:
			return false
		}
	}
	return true
}
