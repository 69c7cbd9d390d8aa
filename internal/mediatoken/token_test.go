package mediatoken

import (
	"strings"
	"testing"
)

func TestHash(t *testing.T) {
	tok, hash, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token, want string
	}{
		{"minted", tok, hash},
		{"empty", "", ""},
		{"short", tok[:42], ""},
		{"long", tok + "A", ""},
		{"not base64url", strings.Repeat("+", 43), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Hash(tc.token); got != tc.want {
				t.Errorf("Hash = %q, want %q", got, tc.want)
			}
		})
	}
	if len(tok) != 43 || len(hash) != 64 || Path(tok) != "/media/"+tok+".iso" {
		t.Errorf("token %q, hash %q, path %q", tok, hash, Path(tok))
	}
}
