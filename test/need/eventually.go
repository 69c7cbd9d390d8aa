package need

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Eventually polls cond every 200 ms until it holds, and fails the test
// with what and cond's last word on it after timeout. A bound, never a
// timing assertion.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, why := cond(ctx)
		if ctx.Err() == nil {
			last = why
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s; last: %s", what, timeout, last)
	}
}
