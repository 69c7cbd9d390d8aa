package inplace

// ApplyLikeCAPI is applyLikeCAPI for the HTTPS tests.
var ApplyLikeCAPI = applyLikeCAPI
