package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/internal/mediatoken"
	"anvil.dev/anvil/pxe/httpboot"
)

// NewToken returns a new one-time media token and its hash
// (internal/mediatoken: the Host controller mints them).
func NewToken() (token, hash string, err error) { return mediatoken.New() }

// HashToken is the hex SHA-256 of a token's bytes ("" for a malformed one).
func HashToken(token string) string { return mediatoken.Hash(token) }

// Path is the URL path of a token's ISO, under the HTTP boot server. The
// ISO's script chains /media/<token>.ipxe, the boot's script, when iPXE
// runs (from the static address), not when the BMC fetches the ISO.
func Path(token string) string { return mediatoken.Path(token) }

// Pattern is the route Handler serves (GET covers HEAD in net/http).
const Pattern = "GET /media/{file}"

// Boot is the boot a token was minted for.
type Boot struct {
	// Key names it in logs (namespace/name of the Host and its boot
	// request), never the token.
	Key string
	// Net is the boot NIC's static network.
	Net Net
	// Script returns the boot script the PXE path serves this Host's boot
	// MAC when asked from remote (it mints the boot credential, bound to
	// remote, which must be the static address). Called for each
	// /media/<token>.ipxe request; never for the ISO.
	Script func(ctx context.Context, remote netip.AddrPort) ([]byte, error)
}

// ErrNoBoot is returned by a Source for a token that is unknown or whose
// boot is over (credential consumed, boot request replaced or gone): the
// handler answers 403 and drops the ISO.
var ErrNoBoot = errors.New("no virtual media boot for this token")

// Source finds the boot a token hash belongs to.
type Source interface {
	Boot(ctx context.Context, tokenHash string) (Boot, error)
}

// HandlerOptions configure a Handler.
type HandlerOptions struct {
	Source Source // required
	// BaseURL is the HTTP boot server as the Host's iPXE reaches it, for
	// the script's URLs. Empty: the address the ISO request came in on.
	BaseURL string
	// IPXE is the iPXE EFI binary with the autoexec patch
	// (ipxebin.Autoexec). Required.
	IPXE   []byte
	Logger logr.Logger
}

// Handler serves GET and HEAD /media/<token>.iso, with Range: BMCs read
// an ISO in ranges, many times, so each token's ISO is built once and kept
// in memory while the Source still knows its boot; once it says ErrNoBoot
// the ISO is dropped and the URL answers 403. It also serves
// /media/<token>.ipxe, the boot's script, which the ISO chains.
type Handler struct {
	o  HandlerOptions
	mu sync.Mutex
	// isos by token hash.
	isos map[string]*built
}

type built struct {
	once sync.Once
	iso  []byte
	at   time.Time
	err  error
}

// NewHandler returns a Handler.
func NewHandler(o HandlerOptions) (*Handler, error) {
	if o.Source == nil || len(o.IPXE) == 0 {
		return nil, errors.New("media: HandlerOptions needs Source and IPXE")
	}
	return &Handler{o: o, isos: map[string]*built{}}, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	token, ext := file, ""
	if i := strings.LastIndexByte(file, '.'); i >= 0 {
		token, ext = file[:i], file[i:]
	}
	hash := HashToken(token)
	// The token is the secret: the access log gets a hash prefix.
	tag := "redacted"
	if hash != "" {
		tag = "sha256-" + hash[:12]
	}
	httpboot.SetLogPath(r, "/media/"+tag+ext)
	if hash == "" || (ext != ".iso" && ext != ".ipxe") {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	log := h.o.Logger.WithValues("tokenHash", hash[:12])
	boot, err := h.o.Source.Boot(r.Context(), hash)
	if err != nil {
		h.forget(hash)
		if !errors.Is(err, ErrNoBoot) {
			log.Error(err, "virtual media lookup")
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	base, err := h.baseURL(r)
	if err != nil {
		log.Error(err, "virtual media")
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if ext == ".ipxe" {
		remote, _ := netip.ParseAddrPort(r.RemoteAddr)
		inner, err := boot.Script(r.Context(), remote)
		if err == nil {
			inner, err = Rewrite(boot.Net, base, inner)
		}
		if err != nil {
			log.Error(err, "virtual media boot script", "boot", boot.Key)
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(inner)
		return
	}
	h.mu.Lock()
	b := h.isos[hash]
	if b == nil {
		b = &built{}
		h.isos[hash] = b
	}
	h.mu.Unlock()
	b.once.Do(func() {
		b.iso, b.err = h.build(boot, base+"/media/"+token+".ipxe")
		b.at = time.Now()
		if b.err == nil {
			log.Info("virtual media ISO built", "boot", boot.Key, "bytes", len(b.iso))
		}
	})
	if b.err != nil {
		log.Error(b.err, "virtual media ISO", "boot", boot.Key)
		h.forget(hash) // the next request tries again
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-iso9660-image")
	http.ServeContent(w, r, "boot.iso", b.at, bytes.NewReader(b.iso))
}

// baseURL is BaseURL or, as the PXE path's script does, the address the
// request came in on (set --http-base-url where hosts reach the server
// elsewhere).
func (h *Handler) baseURL(r *http.Request) (string, error) {
	if h.o.BaseURL != "" {
		return strings.TrimSuffix(h.o.BaseURL, "/"), nil
	}
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return "", errors.New("media: no base URL (--http-base-url) and no local address")
	}
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return scheme + la.String(), nil
}

func (h *Handler) build(boot Boot, chainURL string) ([]byte, error) {
	script, err := ChainScript(boot.Net, chainURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", boot.Key, err)
	}
	return Build(BootFiles(h.o.IPXE, script))
}

func (h *Handler) forget(hash string) {
	h.mu.Lock()
	delete(h.isos, hash)
	h.mu.Unlock()
}

// Sweep drops the ISOs of boots the Source no longer knows (call it when
// Hosts change, so ISOs of finished boots do not wait for a request).
func (h *Handler) Sweep(ctx context.Context) {
	h.mu.Lock()
	hashes := make([]string, 0, len(h.isos))
	for k := range h.isos {
		hashes = append(hashes, k)
	}
	h.mu.Unlock()
	for _, k := range hashes {
		if _, err := h.o.Source.Boot(ctx, k); errors.Is(err, ErrNoBoot) {
			h.forget(k)
		}
	}
}

// SweepEvery calls Sweep every d until ctx is done: a BMC that ejected
// the ISO asks for it no more, so no request would drop it.
func (h *Handler) SweepEvery(ctx context.Context, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.Sweep(ctx)
		}
	}
}

// Held is how many ISOs are in memory.
func (h *Handler) Held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.isos)
}
