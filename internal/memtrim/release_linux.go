package memtrim

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Release gives back the resident pages of the program file's read-only
// mappings that were never written, and returns how many bytes were
// resident in them before.
//
// It asks the kernel to page them out (MADV_PAGEOUT, Linux 5.4): they
// leave the page cache too, unless another process maps them, so that
// what comes back is what is used again, read around the page used. Merely
// unmapping them (MADV_DONTNEED, the fallback on older kernels) leaves
// the page cache's large folios in place, and the next faults map most
// of them back.
func Release() (int64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		return 0, fmt.Errorf("memtrim: %w", err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("memtrim: %w", err)
	}
	defer f.Close()
	dev := fmt.Sprintf("%02x:%02x", unix.Major(st.Dev), unix.Minor(st.Dev))
	maps, err := parseSmaps(f, dev, st.Ino)
	if err != nil {
		return 0, err
	}
	var released int64
	for _, m := range maps {
		if !m.Droppable() {
			continue
		}
		err := madvise(m, unix.MADV_PAGEOUT)
		if errors.Is(err, unix.EINVAL) {
			err = madvise(m, unix.MADV_DONTNEED)
		}
		if err != nil {
			return released, err
		}
		released += m.Rss
	}
	return released, nil
}

// madvise advises the kernel about m. On a private file mapping none of
// whose pages was copied on write, both advices Release uses only drop
// clean copies of the file: the next access reads the file's again.
func madvise(m Mapping, advice int) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.Start, m.End-m.Start, uintptr(advice)); errno != 0 {
		return fmt.Errorf("memtrim: madvise %x-%x: %w", m.Start, m.End, errno)
	}
	return nil
}
