// Package server is the agent API's server side, in anvil: Server
// authenticates each request by the host's agent credential and answers
// from a Backend (agent/server/kube reads the informer cache and writes Host
// and Machine status). The protocol itself is documented in package agent.
package server
