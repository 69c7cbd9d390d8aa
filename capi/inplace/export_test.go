package inplace

import "time"

// ApplyLikeCAPI is applyLikeCAPI for the HTTPS tests.
var ApplyLikeCAPI = applyLikeCAPI

// SetNow moves a CertSecret's clock, for renewal tests.
func SetNow(s *CertSecret, now func() time.Time) { s.now = now }
