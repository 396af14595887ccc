package powercut

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The backing directory: what a power cut leaves, and nothing else.
const (
	treeFile = "tree.json" // the durable namespace
	dataDir  = "data"      // data/<ino>: each file's durable content
)

// The volume's states: a cut freezes it (every operation waits), then
// kills it (every operation fails).
const (
	running = iota
	frozen
	dead
)

// errCut is what every operation returns once the power is cut.
const errCut = syscall.EIO

// span is a byte range [off, end) of a file written since its last fsync.
type span struct{ off, end int64 }

// node is a file or a directory. Its live state is what the mount shows;
// its durable state is what a cut leaves: for a file the content its
// last fsync wrote to data/<ino>, for a directory the entries its last
// commit recorded in tree.json.
type node struct {
	ino   uint64
	dir   bool
	mode  uint32 // permission bits
	mtime time.Time

	// Files. data is the live content once loaded (a clean file that no
	// one has open is dropped from memory and read back when needed).
	data    []byte
	loaded  bool
	size    int64
	dirty   []span // written since the last fsync, in offset order
	trunc   int64  // the smallest size since the last fsync, or -1
	opens   int
	syncing int        // fsyncs writing data/<ino> now
	syncMu  sync.Mutex // orders the fsyncs of one file

	// Directories.
	entries    map[string]*node // live
	durEntries map[string]*node // as of this directory's last commit
}

func (n *node) clean() bool { return len(n.dirty) == 0 && n.trunc < 0 }

// volume is the file system's state, shared by every FUSE node. mu
// guards everything but the backing directory's files, which fsync
// writes outside it (treeMu and each node's syncMu order those writes).
type volume struct {
	backing string
	opts    Options

	mu      sync.Mutex
	cond    *sync.Cond // signalled when state leaves frozen
	state   int
	root    *node
	nextIno uint64

	treeMu   sync.Mutex // orders tree.json writes
	lastTree []byte     // the tree.json last written
	io       sync.WaitGroup
}

// treeJSON is tree.json: every durable node reachable from the root.
type treeJSON struct {
	V     int                 `json:"v"`
	Nodes map[uint64]treeNode `json:"nodes"`
}

type treeNode struct {
	Dir     bool              `json:"dir,omitempty"`
	Mode    uint32            `json:"mode"`
	Entries map[string]uint64 `json:"entries,omitempty"`
}

const rootIno = 1

// openVolume loads the durable state of backing (a new, empty volume if
// it has none) and forgets every file content no durable name reaches:
// what a cut left unnamed is gone, as after a real power cut.
func openVolume(backing string, opts Options) (*volume, error) {
	if err := os.MkdirAll(filepath.Join(backing, dataDir), 0o755); err != nil {
		return nil, fmt.Errorf("powercut: %w", err)
	}
	v := &volume{backing: backing, opts: opts}
	v.cond = sync.NewCond(&v.mu)
	raw, err := os.ReadFile(filepath.Join(backing, treeFile))
	var t treeJSON
	switch {
	case errors.Is(err, fs.ErrNotExist):
		t = treeJSON{V: 1, Nodes: map[uint64]treeNode{rootIno: {Dir: true, Mode: 0o755}}}
	case err != nil:
		return nil, fmt.Errorf("powercut: %w", err)
	default:
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("powercut: %s: %w", treeFile, err)
		}
		v.lastTree = raw
	}
	nodes := map[uint64]*node{}
	var build func(ino uint64) (*node, error)
	build = func(ino uint64) (*node, error) {
		tn, ok := t.Nodes[ino]
		if !ok {
			return nil, fmt.Errorf("powercut: %s names node %d and does not describe it", treeFile, ino)
		}
		if n, ok := nodes[ino]; ok {
			if n.dir {
				return nil, nil // a directory has one name; keep the first
			}
			return n, nil
		}
		n := &node{ino: ino, dir: tn.Dir, mode: tn.Mode, trunc: -1}
		nodes[ino] = n
		v.nextIno = max(v.nextIno, ino+1)
		if !n.dir {
			st, err := os.Stat(v.dataPath(ino))
			switch {
			case err == nil:
				n.size, n.mtime = st.Size(), st.ModTime()
			case !errors.Is(err, fs.ErrNotExist):
				return nil, fmt.Errorf("powercut: %w", err)
			}
			return n, nil
		}
		n.mtime = time.Now()
		n.entries = map[string]*node{}
		for _, name := range slices.Sorted(maps.Keys(tn.Entries)) {
			c, err := build(tn.Entries[name])
			if err != nil {
				return nil, err
			}
			if c != nil {
				n.entries[name] = c
			}
		}
		n.durEntries = maps.Clone(n.entries)
		return n, nil
	}
	if v.root, err = build(rootIno); err != nil {
		return nil, err
	}
	if !v.root.dir {
		return nil, fmt.Errorf("powercut: %s: the root is not a directory", treeFile)
	}
	// Contents no durable name reaches: files created, or renamed over,
	// since their directory's last commit.
	des, err := os.ReadDir(filepath.Join(backing, dataDir))
	if err != nil {
		return nil, fmt.Errorf("powercut: %w", err)
	}
	for _, de := range des {
		ino, err := strconv.ParseUint(de.Name(), 10, 64)
		if n, ok := nodes[ino]; err == nil && ok && !n.dir {
			continue
		}
		if err := os.RemoveAll(filepath.Join(backing, dataDir, de.Name())); err != nil {
			return nil, fmt.Errorf("powercut: %w", err)
		}
	}
	return v, nil
}

func (v *volume) dataPath(ino uint64) string {
	return filepath.Join(v.backing, dataDir, strconv.FormatUint(ino, 10))
}

// enter locks the volume for an operation, waiting while it is frozen;
// it fails (unlocked) once the power is cut.
func (v *volume) enter() syscall.Errno {
	v.mu.Lock()
	for v.state == frozen {
		v.cond.Wait()
	}
	if v.state == dead {
		v.mu.Unlock()
		return errCut
	}
	return 0
}

// freeze makes every operation wait, those under way included unless
// they already passed the point where they take effect: the disk stops
// answering.
func (v *volume) freeze() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.state == running {
		v.state = frozen
	}
}

// kill drops every live state, fails the operations waiting and to come,
// and waits for the writes to the backing directory already under way
// (an fsync that had passed its point of no return): what the backing
// directory holds then is what survived.
func (v *volume) kill() {
	v.mu.Lock()
	v.state = dead
	v.root = nil
	v.cond.Broadcast()
	v.mu.Unlock()
	v.io.Wait()
}

// alive reports whether the volume is mounted and has power.
func (v *volume) alive() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.state != dead
}

func (v *volume) newNode(dir bool, mode uint32) *node {
	n := &node{ino: v.nextIno, dir: dir, mode: mode & 0o7777, mtime: time.Now(), trunc: -1, loaded: !dir}
	v.nextIno++
	if dir {
		n.entries = map[string]*node{}
	}
	return n
}

// load reads a file's durable content back into memory. Only a clean
// file with no fsync under way is ever unloaded, so data/<ino> is its
// live content.
func (v *volume) load(n *node) syscall.Errno {
	if n.loaded {
		return 0
	}
	b, err := os.ReadFile(v.dataPath(n.ino))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return syscall.EIO
	}
	if int64(len(b)) != n.size {
		return syscall.EIO // the backing directory changed under the mount
	}
	n.data, n.loaded = b, true
	return 0
}

// unloadIdle drops a file's content from memory when nothing needs it:
// no one has it open, and it holds nothing an fsync has yet to write.
func (v *volume) unloadIdle(n *node) {
	if !n.dir && n.loaded && n.opens == 0 && n.syncing == 0 && n.clean() {
		n.data, n.loaded = nil, false
	}
}

func (v *volume) lookup(dir *node, name string) (*node, syscall.Errno) {
	if err := v.enter(); err != 0 {
		return nil, err
	}
	defer v.mu.Unlock()
	if !dir.dir {
		return nil, syscall.ENOTDIR
	}
	c, ok := dir.entries[name]
	if !ok {
		return nil, syscall.ENOENT
	}
	return c, 0
}

// create adds a new file or directory to dir, live only: its name is
// durable once dir is committed.
func (v *volume) create(dir *node, name string, isDir bool, mode uint32) (*node, syscall.Errno) {
	if err := v.enter(); err != 0 {
		return nil, err
	}
	defer v.mu.Unlock()
	if _, ok := dir.entries[name]; ok {
		return nil, syscall.EEXIST
	}
	c := v.newNode(isDir, mode)
	dir.entries[name] = c
	dir.mtime = time.Now()
	return c, 0
}

// remove unlinks a file or removes an empty directory, live only.
func (v *volume) remove(dir *node, name string, isDir bool) syscall.Errno {
	if err := v.enter(); err != 0 {
		return err
	}
	defer v.mu.Unlock()
	c, ok := dir.entries[name]
	switch {
	case !ok:
		return syscall.ENOENT
	case isDir && !c.dir:
		return syscall.ENOTDIR
	case !isDir && c.dir:
		return syscall.EISDIR
	case isDir && len(c.entries) > 0:
		return syscall.ENOTEMPTY
	}
	delete(dir.entries, name)
	dir.mtime = time.Now()
	return 0
}

// renameNoReplace is RENAME_NOREPLACE of renameat2.
const renameNoReplace = 1

// rename moves an entry, live only: each directory's side of it is
// durable once that directory is committed.
func (v *volume) rename(from *node, name string, to *node, newName string, flags uint32) syscall.Errno {
	if err := v.enter(); err != 0 {
		return err
	}
	defer v.mu.Unlock()
	if flags&^renameNoReplace != 0 {
		return syscall.EINVAL // RENAME_EXCHANGE and RENAME_WHITEOUT: not needed
	}
	c, ok := from.entries[name]
	if !ok {
		return syscall.ENOENT
	}
	if old, ok := to.entries[newName]; ok {
		switch {
		case old == c:
			return 0
		case flags&renameNoReplace != 0:
			return syscall.EEXIST
		case c.dir && !old.dir:
			return syscall.ENOTDIR
		case !c.dir && old.dir:
			return syscall.EISDIR
		case old.dir && len(old.entries) > 0:
			return syscall.ENOTEMPTY
		}
	}
	delete(from.entries, name)
	to.entries[newName] = c
	from.mtime, to.mtime = time.Now(), time.Now()
	return 0
}

func (v *volume) readdir(dir *node) (map[string]*node, syscall.Errno) {
	if err := v.enter(); err != 0 {
		return nil, err
	}
	defer v.mu.Unlock()
	return maps.Clone(dir.entries), 0
}

// attr is what stat shows.
type attr struct {
	dir   bool
	mode  uint32
	size  int64
	mtime time.Time
}

func (v *volume) attr(n *node) (attr, syscall.Errno) {
	if err := v.enter(); err != 0 {
		return attr{}, err
	}
	defer v.mu.Unlock()
	return attr{dir: n.dir, mode: n.mode, size: n.size, mtime: n.mtime}, 0
}

func (v *volume) open(n *node, truncate bool) syscall.Errno {
	if err := v.enter(); err != 0 {
		return err
	}
	defer v.mu.Unlock()
	if truncate {
		if err := v.setSize(n, 0); err != 0 {
			return err
		}
	}
	n.opens++
	return 0
}

func (v *volume) release(n *node) {
	if v.enter() != 0 {
		return
	}
	defer v.mu.Unlock()
	n.opens--
	v.unloadIdle(n)
}

func (v *volume) read(n *node, dest []byte, off int64) (int, syscall.Errno) {
	if err := v.enter(); err != 0 {
		return 0, err
	}
	defer v.mu.Unlock()
	if err := v.load(n); err != 0 {
		return 0, err
	}
	if off >= n.size {
		return 0, 0
	}
	return copy(dest, n.data[off:]), 0
}

// write changes the live content only: it is durable once the file is
// fsynced.
func (v *volume) write(n *node, p []byte, off int64) (int, syscall.Errno) {
	if err := v.enter(); err != 0 {
		return 0, err
	}
	defer v.mu.Unlock()
	if err := v.load(n); err != 0 {
		return 0, err
	}
	end := off + int64(len(p))
	if end > n.size {
		n.data = append(n.data, make([]byte, end-n.size)...)
		n.size = end
	}
	copy(n.data[off:end], p)
	n.dirty = addSpan(n.dirty, span{off, end})
	n.mtime = time.Now()
	return len(p), 0
}

// addSpan adds s to sorted, disjoint spans, merging those it touches.
func addSpan(spans []span, s span) []span {
	if s.off >= s.end {
		return spans
	}
	// Appends, the common case, extend or follow the last span.
	if k := len(spans); k == 0 || spans[k-1].end < s.off {
		return append(spans, s)
	}
	var out []span
	placed := false
	for _, t := range spans {
		switch {
		case t.end < s.off:
			out = append(out, t)
		case s.end < t.off:
			if !placed {
				out, placed = append(out, s), true
			}
			out = append(out, t)
		default:
			s = span{min(s.off, t.off), max(s.end, t.end)}
		}
	}
	if !placed {
		out = append(out, s)
	}
	return out
}

func (v *volume) truncate(n *node, size int64) syscall.Errno {
	if err := v.enter(); err != 0 {
		return err
	}
	defer v.mu.Unlock()
	return v.setSize(n, size)
}

func (v *volume) setSize(n *node, size int64) syscall.Errno {
	if n.dir {
		return syscall.EISDIR
	}
	if err := v.load(n); err != 0 {
		return err
	}
	if size < n.size {
		n.data = n.data[:size]
		n.trunc = min(size, n.trunc)
		if n.trunc < 0 {
			n.trunc = size
		}
		var kept []span
		for _, s := range n.dirty {
			if s.off < size {
				kept = append(kept, span{s.off, min(s.end, size)})
			}
		}
		n.dirty = kept
	} else {
		// The fsync's final truncate extends data/<ino> with zeros too.
		n.data = append(n.data, make([]byte, size-n.size)...)
	}
	n.size = size
	n.mtime = time.Now()
	return 0
}

func (v *volume) chmod(n *node, mode uint32) syscall.Errno {
	if err := v.enter(); err != 0 {
		return err
	}
	defer v.mu.Unlock()
	n.mode = mode & 0o7777
	return 0
}

// delay is the fsync latency, spent before the fsync takes effect.
func (v *volume) delay() {
	if v.opts.FsyncDelay > 0 {
		time.Sleep(v.opts.FsyncDelay)
	}
}

// fsync makes a file's content, or a directory's entries, durable, and
// what else Options.Names says.
func (v *volume) fsync(n *node) syscall.Errno {
	v.delay()
	switch {
	case n.dir && v.opts.Names == NamesExt4:
		return v.commit(func() { commitAll(v.root) })
	case n.dir && v.opts.Names == NamesLinux:
		return v.commit(func() {
			n.durEntries = maps.Clone(n.entries)
			commitPaths(v.root, n)
		})
	case n.dir:
		return v.commit(func() { n.durEntries = maps.Clone(n.entries) })
	}
	if err := v.syncFile(n); err != 0 {
		return err
	}
	switch v.opts.Names {
	case NamesLinux:
		return v.commit(func() { commitPaths(v.root, n) })
	case NamesExt4:
		return v.commit(func() { commitAll(v.root) })
	}
	return 0
}

// syncFile writes what changed since the last fsync to data/<ino>.
func (v *volume) syncFile(n *node) syscall.Errno {
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	if err := v.enter(); err != 0 {
		return err
	}
	if n.clean() {
		v.mu.Unlock()
		return 0
	}
	type chunk struct {
		off int64
		b   []byte
	}
	var chunks []chunk
	for _, s := range n.dirty {
		chunks = append(chunks, chunk{s.off, bytes.Clone(n.data[s.off:s.end])})
	}
	size, trunc := n.size, n.trunc
	n.dirty, n.trunc = nil, -1
	n.syncing++
	v.io.Add(1)
	v.mu.Unlock()

	err := func() error {
		defer v.io.Done()
		// Not fsynced: a simulated cut never loses the host's page cache.
		f, err := os.OpenFile(v.dataPath(n.ino), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		if trunc >= 0 {
			if err := f.Truncate(trunc); err != nil {
				return err
			}
		}
		for _, c := range chunks {
			if _, err := f.WriteAt(c.b, c.off); err != nil {
				return err
			}
		}
		if err := f.Truncate(size); err != nil {
			return err
		}
		return f.Close()
	}()

	v.mu.Lock()
	n.syncing--
	v.unloadIdle(n)
	v.mu.Unlock()
	if err != nil {
		return syscall.EIO
	}
	return 0
}

// commit changes the durable tree with change, under the lock, and
// writes it.
func (v *volume) commit(change func()) syscall.Errno {
	v.treeMu.Lock()
	defer v.treeMu.Unlock()
	if err := v.enter(); err != 0 {
		return err
	}
	change()
	raw := v.treeLocked()
	if bytes.Equal(raw, v.lastTree) {
		v.mu.Unlock()
		return 0
	}
	v.io.Add(1)
	v.mu.Unlock()
	defer v.io.Done()
	tmp := filepath.Join(v.backing, treeFile+".tmp")
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return syscall.EIO
	}
	if err := os.Rename(tmp, filepath.Join(v.backing, treeFile)); err != nil {
		return syscall.EIO
	}
	v.lastTree = raw
	return 0
}

// commitAll makes the live tree under dir durable.
func commitAll(dir *node) {
	dir.durEntries = maps.Clone(dir.entries)
	for _, c := range dir.entries {
		if c.dir {
			commitAll(c)
		}
	}
}

// commitPaths makes durable every live name of target, and the names of
// the directories on the way to it from dir. Only those entries: the
// directories' other changes wait for their own fsync. A name that was
// renamed within its directory loses its old name with it, as the
// rename's one journal transaction does.
func commitPaths(dir, target *node) bool {
	found := false
	for name, c := range dir.entries {
		if c != target && !(c.dir && commitPaths(c, target)) {
			continue
		}
		found = true
		if dir.durEntries == nil {
			dir.durEntries = map[string]*node{}
		}
		for old, d := range dir.durEntries {
			if d == c && old != name {
				delete(dir.durEntries, old)
			}
		}
		dir.durEntries[name] = c
	}
	return found
}

// treeLocked is tree.json for the durable tree.
func (v *volume) treeLocked() []byte {
	t := treeJSON{V: 1, Nodes: map[uint64]treeNode{}}
	var walk func(n *node)
	walk = func(n *node) {
		if _, ok := t.Nodes[n.ino]; ok {
			return
		}
		tn := treeNode{Dir: n.dir, Mode: n.mode}
		t.Nodes[n.ino] = tn
		if !n.dir {
			return
		}
		tn.Entries = map[string]uint64{}
		for name, c := range n.durEntries {
			tn.Entries[name] = c.ino
		}
		t.Nodes[n.ino] = tn
		for _, c := range n.durEntries {
			walk(c)
		}
	}
	walk(v.root)
	raw, err := json.Marshal(t)
	if err != nil {
		panic(err) // maps of plain values always marshal
	}
	return raw
}

// syncAll makes everything durable, as a clean unmount does.
func (v *volume) syncAll() syscall.Errno {
	if err := v.enter(); err != 0 {
		return err
	}
	var files []*node
	seen := map[*node]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if seen[n] {
			return
		}
		seen[n] = true
		if !n.dir {
			files = append(files, n)
		}
		for _, c := range n.entries {
			walk(c)
		}
	}
	walk(v.root)
	v.mu.Unlock()
	for _, f := range files {
		if err := v.syncFile(f); err != 0 {
			return err
		}
	}
	return v.commit(func() { commitAll(v.root) })
}
