package pxe

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg, or returns the collector already registered
// under the same descriptor, so several servers can share one registry.
func Register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(T); ok {
				return existing
			}
		}
	}
	return c
}
