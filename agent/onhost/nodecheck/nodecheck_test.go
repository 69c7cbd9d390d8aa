package nodecheck

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Check against a real API server is exercised by agent/onhost/upgrade's tests,
// where a fake kubelet updates its Node; these cover the verdict.
func TestVerify(t *testing.T) {
	node := func(version string, ready corev1.ConditionStatus) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
		n.Status.NodeInfo.KubeletVersion = version
		if ready != "" {
			n.Status.Conditions = []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeReady, Status: ready, Reason: "KubeletNotReady", Message: "container runtime is down"},
			}
		}
		return n
	}
	tests := []struct {
		name    string
		n       *corev1.Node
		wantErr string
	}{
		{"ready on the version", node("v1.37.0", corev1.ConditionTrue), ""},
		{"old version", node("v1.36.0", corev1.ConditionTrue), `reports kubelet "v1.36.0", want "v1.37.0"`},
		{"not ready", node("v1.37.0", corev1.ConditionFalse), "not Ready (KubeletNotReady: container runtime is down)"},
		{"unknown", node("v1.37.0", corev1.ConditionUnknown), "not Ready"},
		{"no condition", node("v1.37.0", ""), "no Ready condition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.n, "v1.37.0")
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Verify = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestCheckBadKubeconfig(t *testing.T) {
	if _, err := New(Options{NodeName: "n1"}); err == nil {
		t.Error("no kubeconfig accepted")
	}
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte("not: [a kubeconfig"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Kubeconfig: p, NodeName: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(context.Background(), "v1.37.0"); err == nil {
		t.Error("a broken kubeconfig passed")
	}
}
