//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package repair

import "golang.org/x/sys/unix"

// changeStamp is a file's change time and inode: a copy of a block gets
// new ones even where it keeps the modification time.
func changeStamp(path string) (ctime int64, inode uint64) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return 0, 0
	}
	return st.Ctim.Nano(), uint64(st.Ino)
}
