package upgrade

import (
	"strings"
	"testing"
)

func TestAnswerText(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"artifact failed sha256 verification\n", ": artifact failed sha256 verification"},
		{"", ""},
		{"  \n", ""},
		{"bad \x1b[31mred\x1b[0m\u00a0text\nsecond line", ": bad [31mred[0mtext"},
		{strings.Repeat("x", 500), ": " + strings.Repeat("x", 200)},
	} {
		if got := answerText(strings.NewReader(tc.body)); got != tc.want {
			t.Errorf("answerText(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}
