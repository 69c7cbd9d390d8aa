package ipxebin

import (
	"bytes"
	"errors"
	"testing"
)

func TestAutoexec(t *testing.T) {
	for _, b := range []Build{EFI, SNP} {
		t.Run(b.Name, func(t *testing.T) {
			orig := b.Clone()
			out, err := Autoexec(b.Data)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != len(b.Data) {
				t.Fatalf("length %d, want %d", len(out), len(b.Data))
			}
			if !bytes.Equal(b.Data, orig) {
				t.Fatal("Autoexec modified the build's own bytes")
			}
			if !bytes.Contains(out, []byte(autoexecScript)) || bytes.Contains(out, embeddedScript) {
				t.Fatal("embedded script not replaced")
			}
			// Only the script's bytes differ.
			i := bytes.Index(b.Data, embeddedScript)
			if !bytes.Equal(out[:i], b.Data[:i]) || !bytes.Equal(out[i+len(embeddedScript):], b.Data[i+len(embeddedScript):]) {
				t.Fatal("bytes outside the embedded script changed")
			}
			if _, err := Autoexec(out); !errors.Is(err, ErrNoEmbeddedScript) {
				t.Fatalf("patching twice: %v, want ErrNoEmbeddedScript", err)
			}
		})
	}
}
