package media

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/pxe/httpboot"
)

// tokenBytes is the entropy of a media URL's token.
const tokenBytes = 32

// NewToken returns a new one-time media token (43 base64url characters,
// for the URL only) and its hash (hex SHA-256, the only thing to store).
func NewToken() (token, hash string, err error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token), nil
}

// HashToken is the hex SHA-256 of a token's bytes ("" for a malformed one).
func HashToken(token string) string {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) != tokenBytes {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Path is the URL path of a token's ISO, under the HTTP boot server.
func Path(token string) string { return "/media/" + token + ".iso" }

// Pattern is the route Handler serves (GET covers HEAD in net/http).
const Pattern = "GET /media/{file}"

// Boot is the boot a token was minted for.
type Boot struct {
	// Key names it in logs (namespace/name of the Host and its boot
	// request), never the token.
	Key string
	// Net is the boot NIC's static network.
	Net Net
	// Script returns the boot script the PXE path would serve this Host
	// from its static address (it may mint the boot credential, bound to
	// that address). Called once per token.
	Script func(ctx context.Context) ([]byte, error)
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
// the ISO is dropped and the URL answers 403.
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
	token, ok := strings.CutSuffix(r.PathValue("file"), ".iso")
	hash := HashToken(token)
	// The token is the secret: the access log gets a hash prefix.
	tag := "redacted"
	if hash != "" {
		tag = "sha256-" + hash[:12]
	}
	httpboot.SetLogPath(r, "/media/"+tag+".iso")
	if !ok || hash == "" {
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
	h.mu.Lock()
	b := h.isos[hash]
	if b == nil {
		b = &built{}
		h.isos[hash] = b
	}
	h.mu.Unlock()
	b.once.Do(func() {
		b.iso, b.err = h.build(r.Context(), boot)
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
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/x-iso9660-image")
	http.ServeContent(w, r, "boot.iso", b.at, bytes.NewReader(b.iso))
}

func (h *Handler) build(ctx context.Context, boot Boot) ([]byte, error) {
	inner, err := boot.Script(ctx)
	if err != nil {
		return nil, fmt.Errorf("boot script for %s: %w", boot.Key, err)
	}
	base := h.o.BaseURL
	if base == "" {
		// As the PXE path's script does: the address the request came in
		// on (the BMC's segment; set --http-base-url where hosts reach
		// the server elsewhere).
		la, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr)
		if !ok {
			return nil, errors.New("media: no base URL (--http-base-url) and no local address")
		}
		base = "http://" + la.String()
	}
	script, err := Script(boot.Net, base, inner)
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

// Held is how many ISOs are in memory.
func (h *Handler) Held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.isos)
}
