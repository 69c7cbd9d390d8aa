package render

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"sync"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
)

// Options configure a Renderer.
type Options struct {
	// Render is applied to every render and validation.
	Render RenderOptions
	// CacheEntries bounds the number of cached results (default 512).
	CacheEntries int
	// CacheBytes bounds the total size of cached configs (default 64 MiB).
	CacheBytes int
}

// Stats are cumulative counters of a Renderer.
type Stats struct {
	Hits    uint64 // requests answered from the cache
	Misses  uint64 // requests that were not in the cache
	Renders uint64 // template executions (including Butane where used)
	Entries int    // entries currently cached
	Bytes   int    // bytes currently cached
}

// Renderer renders configs through a bounded LRU cache keyed by a SHA-256 of
// (template, variant, options, vars). Identical requests, for example
// Ignition retrying a fetch or cloud-init fetching four NoCloud files, run
// the template engine and Butane once. Concurrent identical requests are
// collapsed into one render. Failed renders are cached as well: they are
// deterministic, and a broken template must not cost a Butane run per
// request. A Renderer is safe for concurrent use.
type Renderer struct {
	opts  Options
	group singleflight.Group

	mu      sync.Mutex
	lru     *list.List // of *cacheEntry, front = most recent
	byKey   map[string]*list.Element
	bytes   int
	hits    uint64
	misses  uint64
	renders uint64
}

type cacheEntry struct {
	key   string
	ign   []byte
	nc    *NoCloud
	err   *TemplateError
	bytes int
}

// NewRenderer returns a Renderer.
func NewRenderer(opts Options) *Renderer {
	if opts.CacheEntries <= 0 {
		opts.CacheEntries = 512
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 64 << 20
	}
	return &Renderer{opts: opts, lru: list.New(), byKey: map[string]*list.Element{}}
}

// Ignition returns the validated Ignition JSON for tmpl rendered with vars
// (see RenderIgnition). The returned slice is the caller's own copy.
func (r *Renderer) Ignition(ctx context.Context, tmpl string, variant Variant, vars Vars) ([]byte, error) {
	key := r.key("ignition", string(variant), []string{tmpl}, &vars)
	e := r.get(ctx, key, func() *cacheEntry {
		sc := newScrubber(&vars)
		out, terr := renderIgnition(tmpl, variant, &vars, r.opts.Render, sc)
		return &cacheEntry{ign: out, err: terr, bytes: len(out) + len(tmpl)}
	})
	if e.err != nil {
		te := *e.err // the cached error is shared; hand out a copy
		return nil, &te
	}
	return append([]byte(nil), e.ign...), nil
}

// NoCloud returns the rendered NoCloud seed for t and vars (see
// RenderNoCloud). The returned value is the caller's own copy.
func (r *Renderer) NoCloud(ctx context.Context, t NoCloudTemplates, vars Vars) (*NoCloud, error) {
	key := r.key("nocloud", string(VariantCloudInit), []string{t.UserData, t.VendorData, t.NetworkConfig}, &vars)
	e := r.get(ctx, key, func() *cacheEntry {
		sc := newScrubber(&vars)
		nc, terr := renderNoCloud(t, &vars, r.opts.Render, sc)
		n := 0
		if nc != nil {
			n = len(nc.MetaData) + len(nc.UserData) + len(nc.VendorData) + len(nc.NetworkConfig)
		}
		return &cacheEntry{nc: nc, err: terr, bytes: n}
	})
	if e.err != nil {
		te := *e.err
		return nil, &te
	}
	return e.nc.clone(), nil
}

func (n *NoCloud) clone() *NoCloud {
	c := *n
	cp := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		return append([]byte{}, b...)
	}
	c.MetaData, c.UserData, c.VendorData, c.NetworkConfig = cp(n.MetaData), cp(n.UserData), cp(n.VendorData), cp(n.NetworkConfig)
	return &c
}

// Validate checks that tmpl renders to a valid config for variant with
// SampleVars. For VariantCloudInit, tmpl is the user-data template; use
// ValidateNoCloud to check all NoCloud files. It does not use the cache.
func (r *Renderer) Validate(tmpl string, variant Variant) error {
	return r.ValidateWith(tmpl, variant, SampleVars())
}

// ValidateWith is Validate with caller-supplied sample vars, for classes
// whose templates reference Labels or Extra keys the defaults lack.
func (r *Renderer) ValidateWith(tmpl string, variant Variant, vars Vars) error {
	if variant == VariantCloudInit {
		return r.ValidateNoCloudWith(NoCloudTemplates{UserData: tmpl}, vars)
	}
	_, err := RenderIgnition(tmpl, variant, vars, r.opts.Render)
	return err
}

// ValidateNoCloud checks every NoCloud template with SampleVars.
func (r *Renderer) ValidateNoCloud(t NoCloudTemplates) error {
	return r.ValidateNoCloudWith(t, SampleVars())
}

// ValidateNoCloudWith checks every NoCloud template with vars.
func (r *Renderer) ValidateNoCloudWith(t NoCloudTemplates, vars Vars) error {
	_, err := RenderNoCloud(t, vars, r.opts.Render)
	return err
}

// Stats returns the renderer's counters.
func (r *Renderer) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{Hits: r.hits, Misses: r.misses, Renders: r.renders, Entries: r.lru.Len(), Bytes: r.bytes}
}

// key hashes everything that influences the output. Fields are length
// prefixed so no two different inputs share an encoding.
func (r *Renderer) key(kind, variant string, tmpls []string, vars *Vars) string {
	h := sha256.New()
	writeField(h, kind)
	writeField(h, variant)
	writeField(h, fmt.Sprintf("%t/%t/%d", r.opts.Render.Strict, r.opts.Render.AllowExperimental, r.opts.Render.MaxOutputBytes))
	for _, t := range tmpls {
		writeField(h, t)
	}
	// encoding/json sorts map keys, so equal Vars encode equally.
	vb, err := json.Marshal(vars)
	if err != nil {
		// Vars holds only strings, slices and maps of strings.
		panic("ignition: cannot encode Vars: " + err.Error())
	}
	writeField(h, string(vb))
	return string(h.Sum(nil))
}

func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

func (r *Renderer) get(ctx context.Context, key string, render func() *cacheEntry) *cacheEntry {
	r.mu.Lock()
	if el, ok := r.byKey[key]; ok {
		r.lru.MoveToFront(el)
		r.hits++
		r.mu.Unlock()
		return el.Value.(*cacheEntry)
	}
	r.misses++
	r.mu.Unlock()

	v, _, _ := r.group.Do(key, func() (any, error) {
		// Another flight may have finished between our miss and Do.
		r.mu.Lock()
		if el, ok := r.byKey[key]; ok {
			r.mu.Unlock()
			return el.Value.(*cacheEntry), nil
		}
		r.renders++
		r.mu.Unlock()

		e := render()
		e.key = key
		if e.err != nil {
			logr.FromContextOrDiscard(ctx).V(1).Info("config render failed", "stage", e.err.Stage, "line", e.err.Line)
			e.bytes = len(e.err.Reason)
		}
		r.add(e)
		return e, nil
	})
	return v.(*cacheEntry)
}

func (r *Renderer) add(e *cacheEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.bytes > r.opts.CacheBytes {
		return // larger than the whole cache: serve it, do not keep it
	}
	r.byKey[e.key] = r.lru.PushFront(e)
	r.bytes += e.bytes
	for r.lru.Len() > r.opts.CacheEntries || r.bytes > r.opts.CacheBytes {
		old := r.lru.Back()
		oe := old.Value.(*cacheEntry)
		r.lru.Remove(old)
		delete(r.byKey, oe.key)
		r.bytes -= oe.bytes
	}
}
