package image

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// entry is one file of the initramfs. Writing the archive here rather than
// with `cpio` lets it hold device nodes (/dev/console) without root and
// makes it reproducible: no timestamps, owners, or directory order from the
// build machine.
type entry struct {
	mode   fs.FileMode // permission bits plus fs.ModeDir, fs.ModeSymlink or fs.ModeCharDevice
	data   []byte      // file contents
	source string      // or: a file to copy (large binaries are not held in memory)
	target string      // symlink target
	major  uint32      // device numbers of a character device
	minor  uint32
}

// tree is the initramfs being assembled, keyed by path without a leading "/".
type tree map[string]entry

func (t tree) dir(p string) {
	for p != "." && p != "/" && p != "" {
		if _, ok := t[p]; !ok {
			t[p] = entry{mode: fs.ModeDir | 0o755}
		}
		p = path.Dir(p)
	}
}

func (t tree) file(p string, mode fs.FileMode, data []byte) {
	p = strings.TrimPrefix(p, "/")
	t.dir(path.Dir(p))
	t[p] = entry{mode: mode, data: data}
}

func (t tree) copyOf(p string, mode fs.FileMode, source string) {
	p = strings.TrimPrefix(p, "/")
	t.dir(path.Dir(p))
	t[p] = entry{mode: mode, source: source}
}

func (t tree) symlink(p, target string) {
	p = strings.TrimPrefix(p, "/")
	t.dir(path.Dir(p))
	t[p] = entry{mode: fs.ModeSymlink | 0o777, target: target}
}

func (t tree) chardev(p string, mode fs.FileMode, major, minor uint32) {
	p = strings.TrimPrefix(p, "/")
	t.dir(path.Dir(p))
	t[p] = entry{mode: fs.ModeCharDevice | fs.ModeDevice | mode, major: major, minor: minor}
}

// writeNewc writes t as a "newc" (SVR4, no CRC) cpio archive, parents
// before children, ending with the TRAILER!!! record.
func writeNewc(w io.Writer, t tree, open func(string) (io.ReadCloser, int64, error)) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names) // "a" < "a/b": parents come first
	var off int64
	ino := uint32(1)
	for _, n := range names {
		e := t[n]
		var size int64
		var body io.Reader
		var closer io.Closer
		mode := uint32(e.mode.Perm())
		if e.mode&fs.ModeSticky != 0 {
			mode |= 0o1000
		}
		switch {
		case e.mode&fs.ModeDir != 0:
			mode |= 0o040000
		case e.mode&fs.ModeSymlink != 0:
			mode |= 0o120000
			size = int64(len(e.target))
			body = strings.NewReader(e.target)
		case e.mode&fs.ModeCharDevice != 0:
			mode |= 0o020000
		default:
			mode |= 0o100000
			if e.source != "" {
				rc, sz, err := open(e.source)
				if err != nil {
					return err
				}
				size, body, closer = sz, rc, rc
			} else {
				size, body = int64(len(e.data)), strings.NewReader(string(e.data))
			}
		}
		nlink := 1
		if e.mode&fs.ModeDir != 0 {
			nlink = 2
		}
		if err := writeHeader(bw, &off, ino, mode, nlink, size, e.major, e.minor, n); err != nil {
			return err
		}
		ino++
		if body != nil {
			c, err := io.Copy(bw, body)
			if closer != nil {
				closer.Close()
			}
			if err != nil {
				return fmt.Errorf("initramfs: %s: %w", n, err)
			}
			if c != size {
				return fmt.Errorf("initramfs: %s changed size while being archived", n)
			}
			off += c
			if err := pad(bw, &off); err != nil {
				return err
			}
		}
	}
	if err := writeHeader(bw, &off, 0, 0, 1, 0, 0, 0, "TRAILER!!!"); err != nil {
		return err
	}
	return bw.Flush()
}

func writeHeader(w *bufio.Writer, off *int64, ino, mode uint32, nlink int, size int64, major, minor uint32, name string) error {
	if size > 0xffffffff {
		return fmt.Errorf("initramfs: %s is larger than newc allows", name)
	}
	// magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
	// devminor, rdevmajor, rdevminor, namesize, check
	h := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, size, 0, 0, major, minor, len(name)+1, 0)
	n, err := w.WriteString(h + name + "\x00")
	if err != nil {
		return err
	}
	*off += int64(n)
	return pad(w, off)
}

// pad aligns to 4 bytes, as newc requires after headers and file data.
func pad(w *bufio.Writer, off *int64) error {
	for *off%4 != 0 {
		if err := w.WriteByte(0); err != nil {
			return err
		}
		*off++
	}
	return nil
}
