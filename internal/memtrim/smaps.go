package memtrim

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// parseSmaps returns the mappings of the file with device dev and inode
// ino in an smaps listing.
func parseSmaps(r io.Reader, dev string, ino uint64) ([]Mapping, error) {
	var (
		out  []Mapping
		cur  *Mapping
		scan = bufio.NewScanner(r)
	)
	scan.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for scan.Scan() {
		line := scan.Text()
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			cur = nil
			in, err := strconv.ParseUint(f[4], 10, 64)
			if err != nil || f[3] != dev || in != ino {
				continue
			}
			lo, hi, ok := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if !ok || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("memtrim: bad mapping line %q", line)
			}
			out = append(out, Mapping{Start: uintptr(start), End: uintptr(end), Perms: f[1]})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil || len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "Rss:":
			cur.Rss = kb << 10
		case "Anonymous:":
			cur.Anonymous = kb << 10
		}
	}
	if err := scan.Err(); err != nil {
		return nil, fmt.Errorf("memtrim: reading smaps: %w", err)
	}
	return out, nil
}
