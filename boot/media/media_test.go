package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"anvil.dev/anvil/pxe/ipxebin"
	"anvil.dev/anvil/test/need"
)

func bootFiles(t *testing.T, script string) []File {
	t.Helper()
	efi, err := ipxebin.Autoexec(ipxebin.EFI.Data)
	if err != nil {
		t.Fatal(err)
	}
	return []File{{Path: "/EFI/BOOT/BOOTX64.EFI", Data: efi}, {Path: "/autoexec.ipxe", Data: []byte(script)}}
}

func TestFAT12Layout(t *testing.T) {
	big := bytes.Repeat([]byte{0xA5}, 3<<20)
	for _, tc := range []struct {
		name    string
		files   []File
		wantSPC int
	}{
		{"empty file", []File{{Path: "/EMPTY", Data: nil}}, 1},
		{"one sector", []File{{Path: "/A.TXT", Data: []byte("a")}}, 1},
		{"long name", []File{{Path: "/autoexec.ipxe", Data: []byte("#!ipxe\n")}}, 1},
		{"name of 13 characters", []File{{Path: "/abcdefghi.jkl", Data: []byte("x")}}, 1},
		{"nested", []File{{Path: "/EFI/BOOT/BOOTX64.EFI", Data: []byte("MZ")}, {Path: "/EFI/BOOT/grub.cfg", Data: []byte("x")}}, 1},
		{"3 MiB needs 1 KiB clusters", []File{{Path: "/BIG", Data: big}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := FAT12(tc.files)
			if err != nil {
				t.Fatal(err)
			}
			bs := img[:512]
			if got := int(bs[13]); got != tc.wantSPC {
				t.Errorf("sectors per cluster %d, want %d", got, tc.wantSPC)
			}
			if bs[510] != 0x55 || bs[511] != 0xAA || string(bs[54:62]) != "FAT12   " {
				t.Errorf("boot sector signature or type wrong")
			}
			total := int(binary.LittleEndian.Uint16(bs[19:]))
			if total*512 != len(img) {
				t.Errorf("total sectors %d, image %d bytes", total, len(img))
			}
			fatSectors := int(binary.LittleEndian.Uint16(bs[22:]))
			clusters := (total - 1 - 2*fatSectors - rootEntries*32/512) / tc.wantSPC
			if clusters > fat12Max {
				t.Errorf("%d clusters: not FAT12", clusters)
			}
			fat := img[512 : 512+fatSectors*512]
			if !bytes.Equal(fat, img[512+fatSectors*512:512+2*fatSectors*512]) {
				t.Error("the two FATs differ")
			}
			checkWithMtools(t, img, tc.files)
		})
	}
}

func TestFAT12Refuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []File
	}{
		{"relative path", []File{{Path: "A", Data: nil}}},
		{"root", []File{{Path: "/", Data: nil}}},
		{"same name twice", []File{{Path: "/A", Data: nil}, {Path: "/a", Data: nil}}},
		{"file under a file", []File{{Path: "/A", Data: nil}, {Path: "/A/B", Data: nil}}},
		{"name FAT cannot hold", []File{{Path: "/a:b", Data: nil}}},
		{"too large", []File{{Path: "/BIG", Data: make([]byte, 130<<20)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := FAT12(tc.files); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestISOLayout(t *testing.T) {
	esp, err := FAT12(bootFiles(t, "#!ipxe\necho hi\n"))
	if err != nil {
		t.Fatal(err)
	}
	iso, err := ISO(esp)
	if err != nil {
		t.Fatal(err)
	}
	sec := func(n int) []byte { return iso[n*2048 : (n+1)*2048] }
	if string(sec(16)[1:6]) != "CD001" || sec(16)[0] != 1 {
		t.Fatal("no primary volume descriptor at sector 16")
	}
	br := sec(17)
	if br[0] != 0 || !strings.HasPrefix(string(br[7:]), "EL TORITO SPECIFICATION") {
		t.Fatal("no El Torito boot record at sector 17")
	}
	if sec(18)[0] != 255 {
		t.Fatal("no terminator at sector 18")
	}
	cat := sec(int(binary.LittleEndian.Uint32(br[71:])))
	var sum uint16
	for i := 0; i < 32; i += 2 {
		sum += binary.LittleEndian.Uint16(cat[i:])
	}
	if cat[0] != 1 || cat[1] != 0xEF || sum != 0 || cat[30] != 0x55 || cat[31] != 0xAA {
		t.Fatalf("validation entry wrong: % x (sum %#x)", cat[:32], sum)
	}
	d := cat[32:64]
	lba := int(binary.LittleEndian.Uint32(d[8:]))
	count := int(binary.LittleEndian.Uint16(d[6:]))
	if d[0] != 0x88 || d[1] != 0 || count*512 != len(esp) || !bytes.Equal(iso[lba*2048:lba*2048+len(esp)], esp) {
		t.Fatalf("default entry does not point at the EFI image: % x", d)
	}
	if got := binary.LittleEndian.Uint32(sec(16)[80:]); int(got)*2048 != len(iso) {
		t.Errorf("volume space %d sectors, image %d bytes", got, len(iso))
	}

	if _, err := ISO(make([]byte, 100)); err == nil {
		t.Error("ISO accepted an image that is not whole sectors")
	}
	if _, err := ISO(make([]byte, 0x10000*512)); err == nil {
		t.Error("ISO accepted an image over 32 MiB")
	}
	a, _ := Build(bootFiles(t, "x"))
	b, _ := Build(bootFiles(t, "x"))
	if !bytes.Equal(a, b) {
		t.Error("the same files made different ISOs")
	}
}

// TestISOWithDebianTools has xorriso read the boot catalog and extract the
// EFI image, and mtools and fsck.fat read that.
func TestISOWithDebianTools(t *testing.T) {
	for _, c := range []string{"xorriso", "mtype", "fsck.fat"} {
		if _, err := exec.LookPath(c); err != nil {
			need.OrSkip(t, "%s not installed (Debian packages xorriso, mtools, dosfstools)", c)
		}
	}
	files := bootFiles(t, "#!ipxe\necho from the CD\n")
	iso, err := Build(files)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	isoPath := filepath.Join(dir, "boot.iso")
	if err := os.WriteFile(isoPath, iso, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("xorriso", "-indev", isoPath, "-report_el_torito", "plain").CombinedOutput()
	if err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	var img string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 6 && strings.HasPrefix(l, "El Torito boot img") {
			img = strings.Join(f[5:], " ")
		}
	}
	if !strings.HasPrefix(img, "1 UEFI y none") {
		t.Fatalf("xorriso reports boot image %q, want a UEFI no-emulation entry:\n%s", img, out)
	}
	espPath := filepath.Join(dir, "esp.img")
	if out, err := exec.Command("xorriso", "-osirrox", "on", "-indev", isoPath, "-extract", "/EFIBOOT.IMG", espPath).CombinedOutput(); err != nil {
		t.Fatalf("xorriso extract: %v\n%s", err, out)
	}
	esp, err := os.ReadFile(espPath)
	if err != nil {
		t.Fatal(err)
	}
	checkWithMtools(t, esp, files)
}

// checkWithMtools reads every file back with mtype and checks the image
// with fsck.fat (read-only).
func checkWithMtools(t *testing.T, img []byte, files []File) {
	t.Helper()
	for _, c := range []string{"mtype", "fsck.fat"} {
		if _, err := exec.LookPath(c); err != nil {
			need.OrSkip(t, "%s not installed (Debian packages mtools, dosfstools)", c)
		}
	}
	p := filepath.Join(t.TempDir(), "fat.img")
	if err := os.WriteFile(p, img, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("fsck.fat", "-n", "-v", p).CombinedOutput(); err != nil || !strings.Contains(string(out), "12 bit entries") {
		t.Fatalf("fsck.fat -n: %v\n%s", err, out)
	} else if bytes.Contains(out, []byte("Auto-")) {
		t.Fatalf("fsck.fat found something to fix:\n%s", out)
	}
	for _, f := range files {
		cmd := exec.Command("mtype", "-i", p, "::"+f.Path)
		cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
		got, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			errors.As(err, &ee)
			t.Fatalf("mtype %s: %v %s", f.Path, err, ee.Stderr)
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s: mtype read %d bytes, want %d", f.Path, len(got), len(f.Data))
		}
	}
}
