package envtest

import (
	"context"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchCounter wraps a client: it counts status patches (Patches: sent;
// Written: accepted by the API server) and can run BeforeFirst once, just
// before the first status patch goes out, to put a concurrent write between
// a store's read and its write.
type PatchCounter struct {
	client.Client
	Patches     atomic.Int32
	Written     atomic.Int32
	BeforeFirst func()
	once        sync.Once
}

func (c *PatchCounter) Status() client.SubResourceWriter {
	return countingStatus{SubResourceWriter: c.Client.Status(), c: c}
}

type countingStatus struct {
	client.SubResourceWriter
	c *PatchCounter
}

func (s countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.c.Patches.Add(1)
	if s.c.BeforeFirst != nil {
		s.c.once.Do(s.c.BeforeFirst)
	}
	err := s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	if err == nil {
		s.c.Written.Add(1)
	}
	return err
}

// Apply counts a server-side apply of status as a status patch.
func (s countingStatus) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	s.c.Patches.Add(1)
	if s.c.BeforeFirst != nil {
		s.c.once.Do(s.c.BeforeFirst)
	}
	err := s.SubResourceWriter.Apply(ctx, obj, opts...)
	if err == nil {
		s.c.Written.Add(1)
	}
	return err
}
