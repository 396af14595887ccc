package powercut_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/atomicfile"
	"github.com/lumen-home/lumen/internal/powercut"
)

// disk is a backing directory and a mount point, mounted again after
// each cut.
type disk struct {
	t       *testing.T
	backing string
	opts    powercut.Options
	fs      *powercut.FS
}

func newDisk(t *testing.T, opts powercut.Options) *disk {
	t.Helper()
	d := &disk{t: t, backing: t.TempDir(), opts: opts}
	d.mount()
	return d
}

func (d *disk) mount() {
	d.t.Helper()
	d.fs = powercut.MountT(d.t, d.backing, d.t.TempDir(), d.opts)
}

func (d *disk) path(name string) string { return filepath.Join(d.fs.Dir, name) }

// cut cuts the power and mounts what survived.
func (d *disk) cut() {
	d.t.Helper()
	if err := d.fs.Cut(nil); err != nil {
		d.t.Fatal(err)
	}
	d.mount()
}

func (d *disk) write(name, content string) *os.File {
	d.t.Helper()
	f, err := os.OpenFile(d.path(name), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { f.Close() })
	if _, err := f.WriteString(content); err != nil {
		d.t.Fatal(err)
	}
	return f
}

func (d *disk) syncDir(name string) {
	d.t.Helper()
	f, err := os.Open(d.path(name))
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		d.t.Fatal(err)
	}
}

// content is a file's content, or "<none>" when it does not exist.
func (d *disk) content(name string) string {
	d.t.Helper()
	b, err := os.ReadFile(d.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return "<none>"
	}
	if err != nil {
		d.t.Fatal(err)
	}
	return string(b)
}

func mustSync(t *testing.T, f *os.File) {
	t.Helper()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestCut checks what a cut keeps: what was fsynced, with its name made
// durable by an fsync of its directory, and nothing else.
func TestCut(t *testing.T) {
	powercut.Require(t)
	t.Parallel()
	for _, tc := range []struct {
		name string
		// before runs on the mounted disk; the file a must then read
		// live, and after the cut, want.
		before func(d *disk)
		live   string
		want   string
		names  powercut.Names
	}{
		{
			name:   "never fsynced",
			before: func(d *disk) { d.write("a", "hello") },
			live:   "hello", want: "<none>",
		},
		{
			name:   "fsynced, its directory not, by POSIX",
			before: func(d *disk) { mustSync(d.t, d.write("a", "hello")) },
			names:  powercut.NamesPOSIX,
			live:   "hello", want: "<none>",
		},
		{
			name:   "fsynced, its directory not, on Linux",
			before: func(d *disk) { mustSync(d.t, d.write("a", "hello")) },
			names:  powercut.NamesLinux,
			live:   "hello", want: "hello",
		},
		{
			name: "a new file beside it fsynced, on Linux",
			before: func(d *disk) {
				d.write("a", "hello")
				mustSync(d.t, d.write("b", "other"))
			},
			live: "hello", want: "<none>",
		},
		{
			name: "a new file beside it fsynced, on ext4",
			before: func(d *disk) {
				d.write("a", "hello")
				mustSync(d.t, d.write("b", "other"))
			},
			names: powercut.NamesExt4,
			live:  "hello", want: "",
		},
		{
			name: "renamed over and fsynced, on Linux",
			before: func(d *disk) {
				mustSync(d.t, d.write("a", "old"))
				d.syncDir(".")
				f := d.write("b", "new")
				if err := os.Rename(d.path("b"), d.path("a")); err != nil {
					d.t.Fatal(err)
				}
				mustSync(d.t, f)
			},
			live: "new", want: "new",
		},
		{
			name:   "fsynced, its directory not, on ext4",
			before: func(d *disk) { mustSync(d.t, d.write("a", "hello")) },
			names:  powercut.NamesExt4,
			live:   "hello", want: "hello",
		},
		{
			name: "directory fsynced, the file not",
			before: func(d *disk) {
				d.write("a", "hello")
				d.syncDir(".")
			},
			live: "hello", want: "",
		},
		{
			name: "both fsynced",
			before: func(d *disk) {
				mustSync(d.t, d.write("a", "hello"))
				d.syncDir(".")
			},
			live: "hello", want: "hello",
		},
		{
			name: "appended after the fsync",
			before: func(d *disk) {
				f := d.write("a", "hello")
				mustSync(d.t, f)
				d.syncDir(".")
				if _, err := f.WriteString(" world"); err != nil {
					d.t.Fatal(err)
				}
			},
			live: "hello world", want: "hello",
		},
		{
			name: "overwritten in the middle, then fsynced",
			before: func(d *disk) {
				f := d.write("a", "hello world")
				d.syncDir(".")
				mustSync(d.t, f)
				if _, err := f.WriteAt([]byte("J"), 6); err != nil {
					d.t.Fatal(err)
				}
				mustSync(d.t, f)
				if _, err := f.WriteAt([]byte("H"), 0); err != nil {
					d.t.Fatal(err)
				}
			},
			live: "Hello Jorld", want: "hello Jorld",
		},
		{
			name: "truncated after the fsync",
			before: func(d *disk) {
				mustSync(d.t, d.write("a", "hello world"))
				d.syncDir(".")
				if err := os.Truncate(d.path("a"), 5); err != nil {
					d.t.Fatal(err)
				}
			},
			live: "hello", want: "hello world",
		},
		{
			name: "truncated, extended and fsynced",
			before: func(d *disk) {
				f := d.write("a", "hello world")
				mustSync(d.t, f)
				d.syncDir(".")
				if err := f.Truncate(2); err != nil {
					d.t.Fatal(err)
				}
				if _, err := f.WriteAt([]byte("!"), 4); err != nil {
					d.t.Fatal(err)
				}
				mustSync(d.t, f)
			},
			live: "he\x00\x00!", want: "he\x00\x00!",
		},
		{
			name: "O_SYNC writes",
			before: func(d *disk) {
				f, err := os.OpenFile(d.path("a"), os.O_RDWR|os.O_CREATE|os.O_SYNC, 0o644)
				if err != nil {
					d.t.Fatal(err)
				}
				defer f.Close()
				d.syncDir(".")
				if _, err := f.WriteString("hello"); err != nil {
					d.t.Fatal(err)
				}
			},
			live: "hello", want: "hello",
		},
		{
			name: "replaced atomically",
			before: func(d *disk) {
				mustSync(d.t, d.write("a", "old"))
				d.syncDir(".")
				if err := atomicfile.WriteBytes(d.path("a"), []byte("new"), 0o644); err != nil {
					d.t.Fatal(err)
				}
			},
			live: "new", want: "new",
		},
		{
			name: "renamed over, the directory not fsynced",
			before: func(d *disk) {
				mustSync(d.t, d.write("a", "old"))
				d.syncDir(".")
				mustSync(d.t, d.write("b", "new"))
				if err := os.Rename(d.path("b"), d.path("a")); err != nil {
					d.t.Fatal(err)
				}
			},
			live: "new", want: "old",
		},
		{
			name: "removed, the directory not fsynced",
			before: func(d *disk) {
				mustSync(d.t, d.write("a", "old"))
				d.syncDir(".")
				if err := os.Remove(d.path("a")); err != nil {
					d.t.Fatal(err)
				}
			},
			live: "<none>", want: "old",
		},
		{
			name: "removed, the directory fsynced",
			before: func(d *disk) {
				mustSync(d.t, d.write("a", "old"))
				d.syncDir(".")
				if err := os.Remove(d.path("a")); err != nil {
					d.t.Fatal(err)
				}
				d.syncDir(".")
			},
			live: "<none>", want: "<none>",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDisk(t, powercut.Options{Names: tc.names})
			tc.before(d)
			if got := d.content("a"); got != tc.live {
				t.Fatalf("before the cut: %q, want %q", got, tc.live)
			}
			d.cut()
			if got := d.content("a"); got != tc.want {
				t.Fatalf("after the cut: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCutNewDirectory checks when a file in new directories survives: by
// POSIX once every directory on its way is fsynced, on Linux once it or
// its directory is.
func TestCutNewDirectory(t *testing.T) {
	powercut.Require(t)
	t.Parallel()
	for _, tc := range []struct {
		names    powercut.Names
		syncFile bool
		dirs     []string // fsynced after the file
		want     string
	}{
		{powercut.NamesPOSIX, true, []string{"x/y", "x"}, "<none>"},
		{powercut.NamesPOSIX, true, []string{"x/y", "x", "."}, "deep"},
		{powercut.NamesLinux, true, nil, "deep"},
		{powercut.NamesLinux, false, []string{"x/y"}, ""},
		{powercut.NamesLinux, false, []string{"x"}, "<none>"},
		{powercut.NamesExt4, true, nil, "deep"},
	} {
		t.Run(fmt.Sprintf("%s %v %v", tc.names, tc.syncFile, tc.dirs), func(t *testing.T) {
			t.Parallel()
			d := newDisk(t, powercut.Options{Names: tc.names})
			if err := os.MkdirAll(d.path("x/y"), 0o755); err != nil {
				t.Fatal(err)
			}
			f := d.write("x/y/f", "deep")
			if tc.syncFile {
				mustSync(t, f)
			}
			for _, dir := range tc.dirs {
				d.syncDir(dir)
			}
			d.cut()
			if got := d.content("x/y/f"); got != tc.want {
				t.Fatalf("x/y/f = %q after the cut, want %q", got, tc.want)
			}
		})
	}
}

// TestUnmountKeepsEverything: a clean unmount writes everything out.
func TestUnmountKeepsEverything(t *testing.T) {
	powercut.Require(t)
	t.Parallel()
	d := newDisk(t, powercut.Options{})
	if err := os.Mkdir(d.path("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := d.write("x/a", "unsynced")
	f.Close()
	if err := d.fs.Unmount(); err != nil {
		t.Fatal(err)
	}
	d.mount()
	if got := d.content("x/a"); got != "unsynced" {
		t.Fatalf("after a clean unmount: %q", got)
	}
}

// TestFsyncDelay checks that every fsync, of a file and of a directory,
// waits at least the delay.
func TestFsyncDelay(t *testing.T) {
	powercut.Require(t)
	t.Parallel()
	const delay = 30 * time.Millisecond
	d := newDisk(t, powercut.Options{FsyncDelay: delay})
	f := d.write("a", "x")
	for _, sync := range []func(){func() { mustSync(t, f) }, func() { d.syncDir(".") }} {
		t0 := time.Now()
		sync()
		if took := time.Since(t0); took < delay {
			t.Errorf("an fsync took %v, less than the delay %v", took, delay)
		}
	}
}

// TestCutUnderLoad appends checksummed records to files from several
// writers, each fsyncing after every record, cuts at a random moment,
// and checks that every file holds at least the records whose fsync
// returned, intact.
func TestCutUnderLoad(t *testing.T) {
	powercut.Require(t)
	t.Parallel()
	d := newDisk(t, powercut.Options{})
	const writers = 4
	for i := range writers {
		mustSync(t, d.write(name(i), ""))
	}
	d.syncDir(".")
	var acked [writers]atomic.Int64
	var wg sync.WaitGroup
	for i := range writers {
		f, err := os.OpenFile(d.path(name(i)), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int64(0); ; k++ {
				if _, err := f.Write(record(k)); err != nil {
					return // the power is cut
				}
				if f.Sync() != nil {
					return
				}
				acked[i].Store(k + 1)
			}
		}()
	}
	time.Sleep(time.Duration(100+rand.IntN(200)) * time.Millisecond)
	if err := d.fs.Cut(nil); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	d.mount()
	for i := range writers {
		b, err := os.ReadFile(d.path(name(i)))
		if err != nil {
			t.Fatal(err)
		}
		n := int64(len(b) / recordSize)
		if n < acked[i].Load() {
			t.Errorf("%s: %d records after the cut, %d were fsynced", name(i), n, acked[i].Load())
		}
		for k := range n {
			if got := b[k*recordSize : (k+1)*recordSize]; !bytes.Equal(got, record(k)) {
				t.Fatalf("%s: record %d is %x", name(i), k, got)
			}
		}
		t.Logf("%s: %d records fsynced, %d kept (%d bytes)", name(i), acked[i].Load(), n, len(b))
	}
}

func name(i int) string { return string(rune('a' + i)) }

const recordSize = 64

// record k is k and a pattern derived from it.
func record(k int64) []byte {
	b := make([]byte, recordSize)
	binary.LittleEndian.PutUint64(b, uint64(k))
	for j := 8; j < recordSize; j++ {
		b[j] = byte(k*31 + int64(j))
	}
	return b
}

// TestOperationsAfterCutFail: a process that still holds a file open on
// the cut mount gets errors, and writes nothing.
func TestOperationsAfterCutFail(t *testing.T) {
	powercut.Require(t)
	t.Parallel()
	d := newDisk(t, powercut.Options{})
	f := d.write("a", "before")
	mustSync(t, f)
	d.syncDir(".")
	if err := d.fs.Cut(func() error {
		// Still answering nothing: the write waits until the cut.
		done := make(chan error, 1)
		go func() { _, err := f.WriteString(" after"); done <- err }()
		select {
		case err := <-done:
			return errors.New("a write went through after the cut began: " + errString(err))
		case <-time.After(100 * time.Millisecond):
		}
		go func() { <-done }()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err := f.WriteString("later")
	if !errors.Is(err, syscall.EIO) && !errors.Is(err, syscall.ENOTCONN) {
		t.Errorf("a write after the cut: %v, want EIO or ENOTCONN", err)
	}
	d.mount()
	if got := d.content("a"); got != "before" {
		t.Fatalf("after the cut: %q", got)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func TestParseNames(t *testing.T) {
	for _, n := range []powercut.Names{powercut.NamesLinux, powercut.NamesPOSIX, powercut.NamesExt4} {
		if got, err := powercut.ParseNames(n.String()); err != nil || got != n {
			t.Errorf("ParseNames(%q) = %v, %v", n, got, err)
		}
	}
	if _, err := powercut.ParseNames("fat32"); err == nil {
		t.Error("ParseNames(fat32) is no error")
	}
}
