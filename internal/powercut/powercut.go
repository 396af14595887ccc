// Package powercut is a FUSE file system for tests that cuts the power:
// like LazyFS, it keeps what was not fsynced in memory, and a cut throws
// that away. The mount shows the live state; the backing directory holds
// only what is durable, and a mount after a cut starts from it.
//
// What is durable, and when:
//
//   - A file's content and size: as of its last fsync or fdatasync (an
//     O_SYNC write is one: the kernel fsyncs after it). Flush (close) is
//     not fsync, and there is no writeback cache.
//   - A name: create, mkdir, unlink, rmdir and rename change a directory,
//     and the change is durable once that directory is fsynced. Options
//     .Names says what else makes it durable: by default (NamesLinux) the
//     fsync of a file or directory also makes its names durable, with
//     those of the directories that lead to it, as ext4, XFS, btrfs and
//     F2FS all do though POSIX does not promise it; NamesPOSIX is the letter of POSIX
//     (only the directory's fsync), NamesExt4 ext4's data=ordered journal
//     (any fsync commits every change of names made so far). A rename
//     across directories is durable on each side as that side is, so a
//     cut in between can leave both names.
//   - Modes: with the name; owners and times are not modelled.
//
// A cut is the power-cut model: the file system stops answering
// (operations wait, those under way too unless their write to the
// backing directory already began), the caller kills the process that
// uses it, everything not durable is dropped, the waiting operations
// fail with EIO, and the mount is detached (fusermount3 -uz). The
// backing directory is written but never fsynced itself: a simulated cut
// never loses the host's page cache.
//
// Each fsync can also wait Options.FsyncDelay first, the latency of an SD
// card's flush.
//
// The backing directory is not a copy of the tree: tree.json holds the
// durable names and data/<ino> each file's durable content. Read it by
// mounting it.
package powercut

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// Names says what, besides an fsync of their directory, makes changes
// of names durable.
type Names int

const (
	// NamesLinux: the fsync of a file also makes durable its names and
	// the names of the directories that lead to it.
	NamesLinux Names = iota
	// NamesPOSIX: nothing else.
	NamesPOSIX
	// NamesExt4: any fsync makes every change of names durable.
	NamesExt4
)

func (n Names) String() string {
	switch n {
	case NamesLinux:
		return "linux"
	case NamesPOSIX:
		return "posix"
	case NamesExt4:
		return "ext4"
	}
	return "names(" + strconv.Itoa(int(n)) + ")"
}

// ParseNames is the Names a String gave.
func ParseNames(s string) (Names, error) {
	for _, n := range []Names{NamesLinux, NamesPOSIX, NamesExt4} {
		if s == n.String() {
			return n, nil
		}
	}
	return 0, fmt.Errorf("powercut: names %q: want linux, posix or ext4", s)
}

// Options tune a mount.
type Options struct {
	// FsyncDelay is added to every fsync of a file or a directory.
	FsyncDelay time.Duration
	// Names is what makes create, rename and unlink durable.
	Names Names
}

// FS is a mounted power-cut file system.
type FS struct {
	// Dir is where it is mounted.
	Dir     string
	backing string
	v       *volume
	srv     *fuse.Server
}

// Mount mounts the durable state of backing (created if need be) on dir.
// As root it mounts directly, otherwise through fusermount3.
func Mount(backing, dir string, opts Options) (*FS, error) {
	v, err := openVolume(backing, opts)
	if err != nil {
		return nil, err
	}
	root := &fnode{v: v, n: v.root}
	timeout := time.Second
	srv, err := fs.Mount(dir, root, &fs.Options{
		EntryTimeout: &timeout,
		AttrTimeout:  &timeout,
		// The root's inode number is the volume's, like every other's.
		RootStableAttr: &fs.StableAttr{Ino: rootIno},
		MountOptions: fuse.MountOptions{
			FsName:      "powercut",
			Name:        "powercut",
			DirectMount: os.Getuid() == 0,
			// A cut aborts the connection on purpose: nothing to report.
			Logger: log.New(io.Discard, "", 0),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("powercut: mount %s: %w", dir, err)
	}
	return &FS{Dir: dir, backing: backing, v: v, srv: srv}, nil
}

// Cut cuts the power: the file system stops answering, kill runs (it
// should SIGKILL the processes using the mount, and may be nil), what was
// not durable is dropped, and the mount is detached. A process that
// still holds a file there gets EIO. It returns kill's error, if any.
func (f *FS) Cut(kill func() error) error {
	f.v.freeze()
	var kerr error
	if kill != nil {
		kerr = kill()
	}
	f.v.kill()
	// Detached at once; the kernel ends the connection (and the server's
	// loop) when the last file open there is closed.
	if out, err := exec.Command(fusermount(), "-uz", f.Dir).CombinedOutput(); err != nil {
		return errors.Join(kerr, fmt.Errorf("powercut: fusermount -uz %s: %v: %s", f.Dir, err, out))
	}
	return kerr
}

// Unmount syncs everything, as a clean unmount does, and unmounts.
func (f *FS) Unmount() error {
	var serr error
	if err := f.v.syncAll(); err != 0 {
		serr = fmt.Errorf("powercut: sync before unmount: %w", err)
	}
	if err := f.srv.Unmount(); err != nil {
		return errors.Join(serr, fmt.Errorf("powercut: unmount %s: %w", f.Dir, err))
	}
	f.v.kill()
	return serr
}

// fusermount is the FUSE unmount helper, fusermount3 or the older one.
func fusermount() string {
	for _, name := range []string{"fusermount3", "fusermount"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return "fusermount3"
}

// Available says why FUSE cannot be used here, or nil: it needs
// /dev/fuse and fusermount3 (Debian's fuse3).
func Available() error {
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("powercut: no usable /dev/fuse (%w): load the fuse module, or give the container the device", err)
	}
	f.Close()
	if _, err := exec.LookPath(fusermount()); err != nil {
		return errors.New("powercut: no fusermount3 (install Debian's fuse3: the Taskfile's debs task does)")
	}
	return nil
}

// Require stops tb when FUSE cannot be used here: a failure when the CI
// environment variable is set, where the test must run, and a skip that
// says why elsewhere.
func Require(tb testing.TB) {
	tb.Helper()
	if err := Available(); err != nil {
		unavailable(tb, err)
	}
}

func unavailable(tb testing.TB, err error) {
	tb.Helper()
	lumentest.Unavailable(tb, "FUSE", err)
}

// MountT is Mount for a test: where mounting is refused (no FUSE, not
// allowed in this container) it stops tb as Require does, and the mount
// is unmounted when tb ends if it is still mounted then.
func MountT(tb testing.TB, backing, dir string, opts Options) *FS {
	tb.Helper()
	Require(tb)
	f, err := Mount(backing, dir, opts)
	if err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(func() {
		if f.v.alive() {
			if err := f.Unmount(); err != nil {
				tb.Error(err)
			}
		}
	})
	return f
}
