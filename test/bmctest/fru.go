package bmctest

import (
	"fmt"
	"strings"
)

// FRU is the inventory an IPMISim serves as FRU device 0 (IPMI Platform
// Management FRU Information Storage Definition v1.0: a board and a product
// info area).
type FRU struct {
	BoardManufacturer, BoardProduct, BoardSerial, BoardPartNumber      string
	Manufacturer, Product, PartNumber, Version, SerialNumber, AssetTag string
}

// field encodes an 8-bit ASCII type/length field (at most 63 bytes).
func field(s string) []byte {
	if len(s) > 63 {
		s = s[:63]
	}
	return append([]byte{0xc0 | byte(len(s))}, s...)
}

// area finishes an info area: end marker, padding to a multiple of 8 bytes,
// length and a zero checksum.
func area(body []byte) []byte {
	body = append(body, 0xc1)
	for (len(body)+1)%8 != 0 {
		body = append(body, 0)
	}
	body[1] = byte((len(body) + 1) / 8)
	return append(body, checksum(body))
}

func checksum(b []byte) byte {
	var sum byte
	for _, c := range b {
		sum += c
	}
	return -sum
}

// Bytes encodes the FRU image.
func (f *FRU) Bytes() []byte {
	board := []byte{0x01, 0, 0x00, 0, 0, 0} // version, length, English, mfg date unspecified
	for _, s := range []string{f.BoardManufacturer, f.BoardProduct, f.BoardSerial, f.BoardPartNumber, ""} {
		board = append(board, field(s)...)
	}
	board = area(board)
	product := []byte{0x01, 0, 0x00}
	for _, s := range []string{f.Manufacturer, f.Product, f.PartNumber, f.Version, f.SerialNumber, f.AssetTag, ""} {
		product = append(product, field(s)...)
	}
	product = area(product)
	header := []byte{0x01, 0, 0, 1, byte(1 + len(board)/8), 0, 0}
	header = append(header, checksum(header))
	out := append(header, board...)
	return append(out, product...)
}

// fruCommand is the ipmi_sim emulator command that installs a FRU image,
// broken into continuation lines.
func fruCommand(mc, dev byte, data []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mc_add_fru_data 0x%02x %d %d data", mc, dev, len(data))
	for i, c := range data {
		if i%16 == 0 {
			b.WriteString(" \\\n ")
		}
		fmt.Fprintf(&b, " 0x%02x", c)
	}
	b.WriteString("\n")
	return b.String()
}
