package powercut

import (
	"context"
	"maps"
	"os"
	"slices"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// fnode is the kernel's handle on a node: a thin shell over the volume,
// which holds the state.
type fnode struct {
	fs.Inode
	v *volume
	n *node
}

// handle is an open file; it exists so that the kernel's release
// reaches Release.
type handle struct{}

var (
	_ fs.NodeLookuper  = (*fnode)(nil)
	_ fs.NodeGetattrer = (*fnode)(nil)
	_ fs.NodeSetattrer = (*fnode)(nil)
	_ fs.NodeCreater   = (*fnode)(nil)
	_ fs.NodeMkdirer   = (*fnode)(nil)
	_ fs.NodeUnlinker  = (*fnode)(nil)
	_ fs.NodeRmdirer   = (*fnode)(nil)
	_ fs.NodeRenamer   = (*fnode)(nil)
	_ fs.NodeReaddirer = (*fnode)(nil)
	_ fs.NodeOpener    = (*fnode)(nil)
	_ fs.NodeReader    = (*fnode)(nil)
	_ fs.NodeWriter    = (*fnode)(nil)
	_ fs.NodeFsyncer   = (*fnode)(nil)
	_ fs.NodeFlusher   = (*fnode)(nil)
	_ fs.NodeReleaser  = (*fnode)(nil)
	_ fs.NodeStatfser  = (*fnode)(nil)
)

func (f *fnode) child(ctx context.Context, c *node) *fs.Inode {
	mode := uint32(fuse.S_IFREG)
	if c.dir {
		mode = fuse.S_IFDIR
	}
	return f.NewInode(ctx, &fnode{v: f.v, n: c}, fs.StableAttr{Mode: mode, Ino: c.ino})
}

// fill sets out from the node's live attributes.
func (f *fnode) fill(out *fuse.Attr) syscall.Errno {
	a, err := f.v.attr(f.n)
	if err != 0 {
		return err
	}
	out.Ino = f.n.ino
	out.Size = uint64(a.size)
	out.Blocks = (out.Size + 511) / 512
	out.Mode = a.mode | fuse.S_IFREG
	out.Nlink = 1
	if a.dir {
		out.Mode = a.mode | fuse.S_IFDIR
		out.Nlink = 2
	}
	out.Owner = fuse.Owner{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())}
	out.SetTimes(&a.mtime, &a.mtime, &a.mtime)
	return 0
}

func (f *fnode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	c, err := f.v.lookup(f.n, name)
	if err != 0 {
		return nil, err
	}
	ch := f.child(ctx, c)
	return ch, ch.Operations().(*fnode).fill(&out.Attr)
}

func (f *fnode) Getattr(ctx context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	return f.fill(&out.Attr)
}

func (f *fnode) Setattr(ctx context.Context, _ fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		if err := f.v.truncate(f.n, int64(size)); err != 0 {
			return err
		}
	}
	if mode, ok := in.GetMode(); ok {
		if err := f.v.chmod(f.n, mode); err != 0 {
			return err
		}
	}
	// Owners and times are not modelled: a cut keeps or loses content
	// and names, which is what a journal depends on.
	return f.fill(&out.Attr)
}

func (f *fnode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	c, err := f.v.create(f.n, name, false, mode)
	if err != 0 {
		return nil, nil, 0, err
	}
	if err := f.v.open(c, false); err != 0 {
		return nil, nil, 0, err
	}
	ch := f.child(ctx, c)
	return ch, &handle{}, 0, ch.Operations().(*fnode).fill(&out.Attr)
}

func (f *fnode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	c, err := f.v.create(f.n, name, true, mode)
	if err != 0 {
		return nil, err
	}
	ch := f.child(ctx, c)
	return ch, ch.Operations().(*fnode).fill(&out.Attr)
}

func (f *fnode) Unlink(ctx context.Context, name string) syscall.Errno {
	return f.v.remove(f.n, name, false)
}

func (f *fnode) Rmdir(ctx context.Context, name string) syscall.Errno {
	return f.v.remove(f.n, name, true)
}

func (f *fnode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	to, ok := newParent.(*fnode)
	if !ok {
		return syscall.EXDEV
	}
	return f.v.rename(f.n, name, to.n, newName, flags)
}

func (f *fnode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	entries, err := f.v.readdir(f.n)
	if err != 0 {
		return nil, err
	}
	list := make([]fuse.DirEntry, 0, len(entries))
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		c := entries[name]
		mode := uint32(fuse.S_IFREG)
		if c.dir {
			mode = fuse.S_IFDIR
		}
		list = append(list, fuse.DirEntry{Name: name, Ino: c.ino, Mode: mode})
	}
	return fs.NewListDirStream(list), 0
}

func (f *fnode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if err := f.v.open(f.n, flags&syscall.O_TRUNC != 0); err != 0 {
		return nil, 0, err
	}
	return &handle{}, 0, 0
}

func (f *fnode) Read(ctx context.Context, _ fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, err := f.v.read(f.n, dest, off)
	if err != 0 {
		return nil, err
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (f *fnode) Write(ctx context.Context, _ fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	n, err := f.v.write(f.n, data, off)
	return uint32(n), err
}

// Fsync is fsync and fdatasync of a file, and fsync of a directory.
func (f *fnode) Fsync(ctx context.Context, _ fs.FileHandle, flags uint32) syscall.Errno {
	return f.v.fsync(f.n)
}

// Flush (close) makes nothing durable.
func (f *fnode) Flush(ctx context.Context, _ fs.FileHandle) syscall.Errno {
	return 0
}

func (f *fnode) Release(ctx context.Context, _ fs.FileHandle) syscall.Errno {
	f.v.release(f.n)
	return 0
}

// Statfs is the backing file system's, so that free space checks (the
// server's storage limits) see real figures.
func (f *fnode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	var st syscall.Statfs_t
	if err := syscall.Statfs(f.v.backing, &st); err != nil {
		return fs.ToErrno(err)
	}
	out.FromStatfsT(&st)
	return 0
}
