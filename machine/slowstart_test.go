package machine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func TestSlowStart(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		failAt    int // index of the create that fails; -1 none
		wantCalls int
		wantErr   bool
	}{
		{name: "none", n: 0, failAt: -1, wantCalls: 0},
		{name: "all of 200 in batches 1,2,4,...,64,64", n: 200, failAt: -1, wantCalls: 200},
		{name: "the first fails: one request, not 200", n: 200, failAt: 0, wantCalls: 1, wantErr: true},
		// Batches 1,2,4 = 7 calls; index 5 is in the third batch, which still completes.
		{name: "a failure stops after its batch", n: 200, failAt: 5, wantCalls: 7, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			todo := make([]*metalv1.Machine, tc.n)
			index := map[string]int{}
			for i := range todo {
				todo[i] = &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("m-%d", i)}}
				index[todo[i].Name] = i
			}
			var mu sync.Mutex
			calls := map[string]bool{}
			err := slowStart(context.Background(), todo, func(_ context.Context, m *metalv1.Machine) error {
				mu.Lock()
				defer mu.Unlock()
				if calls[m.Name] {
					t.Errorf("%s created twice", m.Name)
				}
				calls[m.Name] = true
				if index[m.Name] == tc.failAt {
					return errors.New("quota exceeded")
				}
				return nil
			})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if len(calls) != tc.wantCalls {
				t.Fatalf("%d creates, want %d", len(calls), tc.wantCalls)
			}
		})
	}
}
