package httpboot

import (
	"context"
	"crypto/tls"
	"net"
)

// TLSConfig is the server side of HTTPS boot: chain is the certificate
// list to send (leaf first, the CA last: iPXE knows its root only by
// fingerprint, so it needs the CA certificate from the server).
//
// iPXE of 2022 (pxe/ipxebin) has neither ECDHE nor TLS 1.3: it needs
// RSA key exchange, which Go no longer offers by default, so the suites
// are listed, ECDHE first for every other client.
func TLSConfig(chain tls.Certificate) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{chain},
		MinVersion:   tls.VersionTLS12,
		CipherSuites: []uint16{
			tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
			// iPXE's:
			tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
			tls.TLS_RSA_WITH_AES_128_CBC_SHA,
			tls.TLS_RSA_WITH_AES_256_CBC_SHA,
		},
	}
}

type tlsKey struct{}

// baseContext tells script sources (WithCAInitrd) whether a CA initrd is
// served.
func (s *Server) baseContext(ctx context.Context) context.Context {
	if s.opts.TLS != nil && s.opts.CAInitrd != nil {
		return context.WithValue(ctx, caInitrdKey{}, true)
	}
	return ctx
}

func connContext(ctx context.Context, c net.Conn) context.Context {
	if _, ok := c.(*tls.Conn); ok {
		return context.WithValue(ctx, tlsKey{}, true)
	}
	return ctx
}

// IsTLS reports whether a request's context (r.Context()) comes from an
// HTTPS connection of a Server, so URLs handed out in the answer keep the
// scheme.
func IsTLS(ctx context.Context) bool {
	v, _ := ctx.Value(tlsKey{}).(bool)
	return v
}

// ContextWithTLS marks ctx as an HTTPS connection's, as Serve does: for
// tests of handlers that call IsTLS.
func ContextWithTLS(ctx context.Context) context.Context {
	return context.WithValue(ctx, tlsKey{}, true)
}
