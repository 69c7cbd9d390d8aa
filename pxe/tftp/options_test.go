package tftp

import "testing"

// The default must stay far above a rack powering on at once: firmware
// does not retry a refused transfer (see Options.MaxConcurrent).
func TestMaxConcurrentDefault(t *testing.T) {
	for _, tc := range []struct {
		set, want int
	}{
		{0, 1024},
		{-1, 1024},
		{5000, 5000},
		{8, 8},
	} {
		o := Options{MaxConcurrent: tc.set}
		o.setDefaults()
		if o.MaxConcurrent != tc.want {
			t.Errorf("MaxConcurrent %d: got %d, want %d", tc.set, o.MaxConcurrent, tc.want)
		}
	}
}
