// Package mediatoken is the one-time token of a virtual media ISO URL
// (/media/<token>.iso): minted by the Host controller (inventory), checked
// by the boot server (boot/media). Only its hash is ever stored.
package mediatoken

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// tokenBytes is the entropy of a token.
const tokenBytes = 32

// New returns a new token (43 base64url characters, for the URL only) and
// its hash (hex SHA-256, the only thing to store).
func New() (token, hash string, err error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, Hash(token), nil
}

// Hash is the hex SHA-256 of a token's bytes ("" for a malformed one).
func Hash(token string) string {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) != tokenBytes {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Path is the URL path of a token's ISO on the boot HTTP server.
func Path(token string) string { return "/media/" + token + ".iso" }
