package tftp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
)

// TFTP opcodes (RFC 1350, RFC 2347).
const (
	opRRQ   = 1
	opWRQ   = 2
	opDATA  = 3
	opACK   = 4
	opERROR = 5
	opOACK  = 6
)

// TFTP error codes (RFC 1350, RFC 2347).
const (
	errCodeUndefined     = 0
	errCodeNotFound      = 1
	errCodeAccess        = 2
	errCodeIllegalOp     = 4
	errCodeUnknownTID    = 5
	errCodeOptionRefused = 8
)

// Limits of the options we accept (RFC 2348, RFC 7440).
const (
	minBlockSize     = 8
	maxBlockSize     = 65464
	defaultBlockSize = 512
	maxWindowSize    = 65535
	// ethernetBlockSize is the largest block that fits a 1500-byte MTU
	// (1500 - 20 IP - 8 UDP - 4 TFTP): what a server whose MTU it cannot
	// tell offers, as fragmented blocks are what firmware handles worst.
	ethernetBlockSize = 1468
)

// request is a parsed read or write request.
type request struct {
	op       uint16
	filename string
	mode     string
	// Options the client asked for, lower-cased names; the values as sent.
	options map[string]string
	// order keeps the options in the client's order, for the OACK.
	order []string
}

var errMalformed = errors.New("malformed request")

// parseRequest parses an RRQ or WRQ: opcode, filename NUL, mode NUL, then
// option NUL value NUL pairs (RFC 2347). Option names are case-insensitive;
// a repeated option keeps its first value. Anything else is malformed.
func parseRequest(p []byte) (request, error) {
	if len(p) < 4 {
		return request{}, errMalformed
	}
	r := request{op: binary.BigEndian.Uint16(p)}
	if r.op != opRRQ && r.op != opWRQ {
		return request{}, errMalformed
	}
	fields := bytes.Split(p[2:], []byte{0})
	// A well-formed packet ends with NUL, so the last field is empty.
	if len(fields) < 3 || len(fields[len(fields)-1]) != 0 {
		return request{}, errMalformed
	}
	fields = fields[:len(fields)-1]
	if len(fields)%2 != 0 || len(fields[0]) == 0 {
		return request{}, errMalformed
	}
	r.filename = string(fields[0])
	r.mode = strings.ToLower(string(fields[1]))
	for i := 2; i < len(fields); i += 2 {
		name := strings.ToLower(string(fields[i]))
		if name == "" {
			return request{}, errMalformed
		}
		if r.options == nil {
			r.options = map[string]string{}
		}
		if _, dup := r.options[name]; dup {
			continue
		}
		r.options[name] = string(fields[i+1])
		r.order = append(r.order, name)
	}
	return r, nil
}

// negotiated is what a transfer runs with.
type negotiated struct {
	blockSize  int
	windowSize int
	// oack holds the options acknowledged, in the client's order; empty:
	// no OACK, the transfer starts with DATA block 1 (RFC 2347: options
	// the server does not accept are left out; none left, no OACK).
	oack []option
}

type option struct{ name, value string }

// negotiate accepts the options we serve: blksize (capped at maxBlock),
// tsize (answered with size) and windowsize (capped at maxWindow). Others
// (timeout, multicast, ...) are left out of the OACK, which RFC 2347
// allows; the client then uses its default.
func negotiate(r request, size int64, maxBlock, maxWindow int) negotiated {
	n := negotiated{blockSize: defaultBlockSize, windowSize: 1}
	for _, name := range r.order {
		v := r.options[name]
		switch name {
		case "blksize":
			b, err := strconv.Atoi(v)
			if err != nil || b < minBlockSize {
				continue
			}
			n.blockSize = min(b, maxBlock, maxBlockSize)
			n.oack = append(n.oack, option{name, strconv.Itoa(n.blockSize)})
		case "tsize":
			// In a read request the client sends 0 and we answer the size.
			if _, err := strconv.ParseUint(v, 10, 64); err != nil || size < 0 {
				continue
			}
			n.oack = append(n.oack, option{name, strconv.FormatInt(size, 10)})
		case "windowsize":
			w, err := strconv.Atoi(v)
			if err != nil || w < 1 {
				continue
			}
			n.windowSize = min(w, maxWindow, maxWindowSize)
			n.oack = append(n.oack, option{name, strconv.Itoa(n.windowSize)})
		}
	}
	return n
}

func appendOACK(b []byte, opts []option) []byte {
	b = binary.BigEndian.AppendUint16(b, opOACK)
	for _, o := range opts {
		b = append(b, o.name...)
		b = append(b, 0)
		b = append(b, o.value...)
		b = append(b, 0)
	}
	return b
}

func appendError(b []byte, code uint16, msg string) []byte {
	b = binary.BigEndian.AppendUint16(b, opERROR)
	b = binary.BigEndian.AppendUint16(b, code)
	b = append(b, msg...)
	return append(b, 0)
}

// parseAck returns the block number of an ACK packet.
func parseAck(p []byte) (uint16, bool) {
	if len(p) < 4 || binary.BigEndian.Uint16(p) != opACK {
		return 0, false
	}
	return binary.BigEndian.Uint16(p[2:]), true
}

// parseError returns the code and message of an ERROR packet.
func parseError(p []byte) (uint16, string, bool) {
	if len(p) < 4 || binary.BigEndian.Uint16(p) != opERROR {
		return 0, "", false
	}
	msg := p[4:]
	if i := bytes.IndexByte(msg, 0); i >= 0 {
		msg = msg[:i]
	}
	return binary.BigEndian.Uint16(p[2:]), string(msg), true
}
