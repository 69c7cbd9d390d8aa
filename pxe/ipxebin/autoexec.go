package ipxebin

import (
	"bytes"
	"errors"
	"fmt"
)

// embeddedScript is the script ipxedust builds into its binaries (its
// binary/script/embed.ipxe). iPXE runs an embedded script before anything
// else, so this one's autoboot (DHCP) would run instead of an
// autoexec.ipxe on the boot medium: checked in QEMU with OVMF from a CD.
var embeddedScript = []byte("#!ipxe\n  \nset user-class Tinkerbell\necho Welcome to Neverland!\n\n" +
	"# Allow the operator to drop to a shell\n" +
	"prompt --key 0x02 --timeout 2000 Press Ctrl-B for the iPXE command line... && shell ||\n\nautoboot\n")

// autoexecScript replaces it: run autoexec.ipxe from the filesystem iPXE
// was loaded from (EFI file: URIs read the boot device), else autoboot.
const autoexecScript = "#!ipxe\nchain file:/autoexec.ipxe || autoboot\n"

// ErrNoEmbeddedScript is wrapped by Autoexec when a binary does not hold
// ipxedust's embedded script exactly once.
var ErrNoEmbeddedScript = errors.New("ipxedust's embedded script not found exactly once")

// Autoexec returns a copy of an EFI build's bytes (a Build's Data, or the
// output of Trust) whose embedded script chains /autoexec.ipxe from the
// boot medium, for booting iPXE from a CD or USB image with a script next
// to it. The script is replaced in place: the build records its length, so
// the new one is padded to the same length with a comment.
func Autoexec(data []byte) ([]byte, error) {
	if n := bytes.Count(data, embeddedScript); n != 1 {
		return nil, fmt.Errorf("ipxebin: autoexec patch: %w (found %d times)", ErrNoEmbeddedScript, n)
	}
	repl := autoexecPatch()
	out := append([]byte(nil), data...)
	copy(out[bytes.Index(out, embeddedScript):], repl)
	return out, nil
}

func autoexecPatch() []byte {
	b := []byte(autoexecScript + "#")
	for len(b) < len(embeddedScript)-1 {
		b = append(b, ' ')
	}
	return append(b, '\n')
}
