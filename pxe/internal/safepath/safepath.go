// Package safepath turns a file name received from the network (a TFTP
// request, an HTTP path) into a file opened inside a root directory, with no
// way out of that root.
//
// Two layers: Clean rejects anything that is not a plain relative path
// (absolute paths, "..", NUL and control bytes, backslashes), and Open uses
// os.Root, whose openat-style resolution refuses symlinks that resolve
// outside the root, then insists on a regular file.
package safepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// MaxLen bounds a request path; TFTP and PXE file names are short.
const MaxLen = 1024

// ErrInvalid is wrapped by every rejection from Clean.
var ErrInvalid = errors.New("invalid path")

// ErrNotRegular is returned by Open for directories, devices, sockets, ...
var ErrNotRegular = errors.New("not a regular file")

// Clean validates a request path and returns its canonical relative form
// (no leading "/", no "." or empty elements). It rejects rather than
// repairs: "../x", "/x", "a/../b", "a\\b" and names with NUL or control bytes
// are errors, so a client can never name a file by an unusual spelling.
func Clean(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: empty", ErrInvalid)
	}
	if len(name) > MaxLen {
		return "", fmt.Errorf("%w: too long", ErrInvalid)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c == 0x7f {
			return "", fmt.Errorf("%w: control byte", ErrInvalid)
		}
		if c == '\\' {
			return "", fmt.Errorf("%w: backslash", ErrInvalid)
		}
	}
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%w: absolute path", ErrInvalid)
	}
	var parts []string
	for _, el := range strings.Split(name, "/") {
		switch el {
		case "", ".":
			continue
		case "..":
			return "", fmt.Errorf("%w: parent directory reference", ErrInvalid)
		}
		parts = append(parts, el)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("%w: names no file", ErrInvalid)
	}
	clean := strings.Join(parts, "/")
	// Belt and braces: the result must be local by the standard library's
	// definition too.
	if !fs.ValidPath(clean) || path.Clean(clean) != clean {
		return "", fmt.Errorf("%w: not a local path", ErrInvalid)
	}
	return clean, nil
}

// Open cleans name and opens it read-only inside root. Symlinks are followed
// only while they stay inside root (os.Root semantics). The file must be a
// regular file; its FileInfo is returned from the opened descriptor, so it
// describes exactly the bytes that will be read.
func Open(root *os.Root, name string) (*os.File, fs.FileInfo, string, error) {
	clean, err := Clean(name)
	if err != nil {
		return nil, nil, "", err
	}
	f, err := root.Open(clean)
	if err != nil {
		return nil, nil, clean, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, clean, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, clean, fmt.Errorf("%s: %w", clean, ErrNotRegular)
	}
	return f, fi, clean, nil
}
