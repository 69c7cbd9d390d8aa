package redfish

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
)

// maxRedirects bounds the redirects one request follows.
const maxRedirects = 3

// redirectError is a redirect the driver does not follow. It names the
// target (without user info) so an admin can fix the Host's address.
type redirectError struct {
	Status int
	From   string // path of the redirected request
	To     string // the Location, resolved, without user info
	Why    string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("HTTP %d %s from %s to %s: not followed: %s", e.Status, http.StatusText(e.Status), e.From, e.To, e.Why)
}

// checkRedirect follows 307 and 308 (which keep the method and body, so an
// action is not turned into a GET) within the same BMC only: the transport
// authenticates every request it sends, so following a redirect to another
// host would hand it our credentials.
func (d *Driver) checkRedirect(req *http.Request, via []*http.Request) error {
	status := http.StatusFound
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	e := &redirectError{Status: status, To: safeURL(req.URL)}
	if len(via) > 0 {
		e.From = via[len(via)-1].URL.Path
	}
	switch {
	case status != http.StatusTemporaryRedirect && status != http.StatusPermanentRedirect:
		e.Why = "only 307 and 308 keep the request's method; if the BMC moved, put the new URL in the Host's spec.bmc.address"
	case !sameOrigin(req.URL, d.endpoint):
		e.Why = "it leaves the BMC " + d.endpoint + " (credentials go only to the address in the Host's spec.bmc.address; change it if the BMC moved)"
	case len(via) > maxRedirects:
		e.Why = fmt.Sprintf("more than %d redirects", maxRedirects)
	default:
		return nil
	}
	return e
}

// sameOrigin reports whether u has the scheme, host and port of endpoint.
func sameOrigin(u *url.URL, endpoint string) bool {
	ep, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	return u.Scheme == ep.Scheme && hostPort(u) == hostPort(ep)
}

func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// safeURL is u without user info, for messages.
func safeURL(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
