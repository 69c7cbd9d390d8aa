package ops

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// OneLine keeps a message on one line and drops control characters, so a
// message from the API cannot break a table or move a terminal's cursor.
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			return -1 // ESC and friends: a message must not drive the terminal
		}
		return r
	}, s)), " ")
}

// ConditionLine is a condition as one line: Type=Status Reason: message.
func ConditionLine(c metav1.Condition) string {
	s := string(c.Type) + "=" + string(c.Status) + " " + c.Reason
	if c.Message != "" {
		s += ": " + OneLine(c.Message)
	}
	return s
}

// MachineFailureText says why a Machine failed, in one line.
func MachineFailureText(m *metalv1.Machine) string {
	s := m.Status
	switch {
	case s.FailureReason != "" && s.FailureMessage != "":
		return s.FailureReason + ": " + OneLine(s.FailureMessage)
	case s.FailureReason != "" || s.FailureMessage != "":
		return s.FailureReason + OneLine(s.FailureMessage)
	}
	for _, c := range s.Conditions {
		if c.Status == metav1.ConditionFalse {
			return ConditionLine(c)
		}
	}
	return "no reason given"
}

// orDash takes any string type, so the API's enums print without a cast.
func orDash[S ~string](s S) string {
	if s == "" {
		return "-"
	}
	return string(s)
}
