package repair

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/lumen-home/lumen/internal/atomicfile"
)

// CheckedFile is where CheckStart remembers the blocks it read intact:
// in the data directory, beside nats-server's jetstream directory, which
// the server neither reads nor rewrites.
const CheckedFile = "journal-checked.json"

// CheckStart is lumen up's check: Check, except that a block an earlier
// CheckStart read intact, and unchanged since, is not read again; the
// last block, the one the server appends to and a power cut tears, is
// always read. It remembers the blocks it reads intact in CheckedFile.
//
// A block counts as unchanged while its size, modification and change
// times and inode are those it had when it was read. That catches every
// write through the file system: the server appending, compacting or
// cutting a block, lumen journal repair, a person's editor, a restore
// from a backup (a copy has a new change time and inode even when it
// keeps the modification time). It does NOT catch a byte the disk or SD
// card itself flips later in a block already remembered: the medium
// changes no time nor size, and only reading the block finds it. The
// daemon then starts, and nats-server skips the damaged event without a
// gap (a damaged record length is worse: the server cuts the block there
// at its start, silently); Check (journal repair, replay --data) still
// names a damaged event. Should a light fail to start, the daemon runs
// Forget and CheckStart, a full read, and names the damage.
func CheckStart(data string) (Report, error) {
	path := filepath.Join(data, CheckedFile)
	seen := readMemo(path)
	r, err := check(data, &seen)
	if err != nil || !seen.changed {
		return r, err
	}
	// Best effort: without the file the next start reads every block
	// again, slower but as sure. (A data directory the daemon cannot
	// write to fails it soon anyway.)
	_ = seen.write(path)
	return r, nil
}

// Forget drops what CheckStart remembers of data's blocks: the next
// CheckStart reads every block.
func Forget(data string) error {
	if err := os.Remove(filepath.Join(data, CheckedFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("repair: %w", err)
	}
	return nil
}

// stamp is what the file system says of a block without reading it.
type stamp struct {
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime_ns"`
	CTime int64  `json:"ctime_ns,omitempty"` // 0 where the system has none
	Inode uint64 `json:"inode,omitempty"`
}

func stampOf(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}, err
	}
	st := stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	st.CTime, st.Inode = changeStamp(path)
	return st, nil
}

// block is a block remembered intact: its stamp then, and its last
// intact sequence (which the next block's lost ranges start after).
type block struct {
	stamp
	Last uint64 `json:"last"`
}

// memo is CheckedFile's content.
type memo struct {
	Blocks  map[string]block `json:"blocks"`
	changed bool
}

// readMemo reads what an earlier CheckStart remembered; a missing or
// unreadable file remembers nothing.
func readMemo(path string) memo {
	var m memo
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &m) != nil {
		m = memo{changed: true}
	}
	if m.Blocks == nil {
		m.Blocks = map[string]block{}
	}
	return m
}

// intact reports whether name was remembered intact with stamp st, and
// its last intact sequence.
func (m *memo) intact(name string, st stamp) (uint64, bool) {
	b, ok := m.Blocks[name]
	if !ok || b.stamp != st {
		return 0, false
	}
	return b.Last, true
}

// read remembers a block just read: intact, with its stamp st and last
// intact sequence; else not at all.
func (m *memo) read(name string, st stamp, last uint64, intact bool) {
	_, had := m.Blocks[name]
	switch {
	case intact:
		m.Blocks[name] = block{stamp: st, Last: last}
		m.changed = true
	case had:
		delete(m.Blocks, name)
		m.changed = true
	}
}

// keep forgets the blocks that are no longer there.
func (m *memo) keep(blocks []string) {
	for _, name := range slices.Collect(maps.Keys(m.Blocks)) {
		if !slices.Contains(blocks, name) {
			delete(m.Blocks, name)
			m.changed = true
		}
	}
}

func (m *memo) write(path string) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	return atomicfile.WriteBytes(path, b, 0o600)
}
