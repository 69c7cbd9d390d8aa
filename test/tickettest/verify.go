package tickettest

// An implementation of the Standard Webhooks signature scheme written from
// the specification (https://www.standardwebhooks.com), on purpose without
// looking at or sharing code with package ticket: a receiver that agrees
// with Anvil's signer this way shows the signer follows the spec, not
// merely itself.
//
//	signed content = webhook-id + "." + webhook-timestamp + "." + body
//	key            = base64-decode(secret without its "whsec_" prefix)
//	signature      = "v1," + base64(HMAC-SHA256(key, signed content))
//	header         = one or more signatures separated by spaces

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SpecSign computes the v1 signature of a message as the spec defines it.
func SpecSign(secret, msgID string, timestamp int64, body []byte) (string, error) {
	key, err := specKey(secret)
	if err != nil {
		return "", err
	}
	content := msgID + "." + strconv.FormatInt(timestamp, 10) + "." + string(body)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(content))
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

func specKey(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return nil, fmt.Errorf("secret lacks the whsec_ prefix")
	}
	return base64.StdEncoding.DecodeString(b64)
}

// SpecVerify checks a received webhook: the three headers, the timestamp
// within tolerance of now, one matching v1 signature.
func SpecVerify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id := h.Get("Webhook-Id")
	tsText := h.Get("Webhook-Timestamp")
	sigHeader := h.Get("Webhook-Signature")
	if id == "" || tsText == "" || sigHeader == "" {
		return fmt.Errorf("missing webhook headers")
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q is not an integer", tsText)
	}
	age := now.Unix() - ts
	if age > int64(tolerance/time.Second) || -age > int64(tolerance/time.Second) {
		return fmt.Errorf("webhook-timestamp %d is %ds away from now", ts, age)
	}
	expected, err := SpecSign(secret, id, ts, body)
	if err != nil {
		return err
	}
	for _, candidate := range strings.Split(sigHeader, " ") {
		if subtle.ConstantTimeCompare([]byte(candidate), []byte(expected)) == 1 {
			return nil
		}
	}
	return fmt.Errorf("no signature matched")
}

// SignRequest sets the webhook headers on req for body, signed at ts.
func SignRequest(req *http.Request, secret, msgID string, ts time.Time, body []byte) error {
	sig, err := SpecSign(secret, msgID, ts.Unix(), body)
	if err != nil {
		return err
	}
	req.Header.Set("Webhook-Id", msgID)
	req.Header.Set("Webhook-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("Webhook-Signature", sig)
	return nil
}
