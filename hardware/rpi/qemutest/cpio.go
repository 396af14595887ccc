package qemutest

import (
	"fmt"
	"io"
	"io/fs"
)

// CPIO writes an initramfs: a cpio archive in the "newc" format the Linux
// kernel unpacks, built in memory without root, mknod or the cpio tool.
// Entries are written in order, so a directory must come before its
// contents. Close writes the trailer.
type CPIO struct {
	w   io.Writer
	ino int
	err error
}

// NewCPIO returns a writer of an archive to w.
func NewCPIO(w io.Writer) *CPIO { return &CPIO{w: w, ino: 1} }

// Mode bits of a newc header's file type.
const (
	cpioDir  = 0o040000
	cpioFile = 0o100000
	cpioChar = 0o020000
)

// Dir adds a directory.
func (c *CPIO) Dir(name string, perm fs.FileMode) error {
	return c.entry(name, cpioDir|uint32(perm.Perm()), 0, 0, nil)
}

// File adds a regular file.
func (c *CPIO) File(name string, perm fs.FileMode, data []byte) error {
	return c.entry(name, cpioFile|uint32(perm.Perm()), 0, 0, data)
}

// CharDev adds a character device node, e.g. dev/console (5, 1).
func (c *CPIO) CharDev(name string, perm fs.FileMode, major, minor int) error {
	return c.entry(name, cpioChar|uint32(perm.Perm()), major, minor, nil)
}

// Close writes the trailer. It does not close the underlying writer.
func (c *CPIO) Close() error { return c.entry("TRAILER!!!", 0, 0, 0, nil) }

// entry writes a header (110 bytes: the magic and 13 fields of 8 hex
// digits), the NUL-terminated name padded to 4 bytes, and the data padded
// to 4 bytes.
func (c *CPIO) entry(name string, mode uint32, rmajor, rminor int, data []byte) error {
	if c.err != nil {
		return c.err
	}
	nlink := 1
	if mode&cpioDir != 0 {
		nlink = 2
	}
	ino := c.ino
	if name == "TRAILER!!!" {
		ino = 0
	}
	c.ino++
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rmajor, rminor, len(name)+1, 0)
	buf := make([]byte, 0, len(hdr)+len(name)+8)
	buf = append(buf, hdr...)
	buf = append(buf, name...)
	buf = append(buf, 0)
	buf = pad4(buf, len(buf))
	if _, c.err = c.w.Write(buf); c.err != nil {
		return c.err
	}
	if _, c.err = c.w.Write(data); c.err != nil {
		return c.err
	}
	_, c.err = c.w.Write(make([]byte, (4-len(data)%4)%4))
	return c.err
}

func pad4(b []byte, n int) []byte {
	for ; n%4 != 0; n++ {
		b = append(b, 0)
	}
	return b
}
