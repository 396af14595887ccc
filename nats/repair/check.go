// Package repair finds and repairs damage in the journal's files on disk
// (the LUMEN stream of a stopped daemon's data directory): a message
// block whose record fails its checksum, a stream metadata file that no
// longer matches its checksum.
//
// nats-server only notices a damaged record when it reads it: a consumer
// or a direct get of it fails, and a light that needs it fails on every
// start. Check reads the files the way the server writes them and names
// what is lost; Repair keeps every intact event, erases the damaged
// records, rewrites a damaged metadata file and journals a gap that
// names the lost sequences.
package repair

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/minio/highwayhash"

	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/subject"
)

// The record layout of nats-server's file store (server/filestore.go):
// a 22-byte header (length with the headers bit, sequence with the
// erased and tombstone bits, timestamp, subject length), the subject,
// the headers (4-byte length first) and data, and an 8-byte highwayhash
// of the header's sequence and timestamp, the subject and the rest.
const (
	hdrSize    = 22
	hashSize   = 8
	hbit       = 1 << 31
	ebit       = 1 << 63
	tbit       = 1 << 62
	maxRecord  = 32 << 20 // the server's rlBadThresh
	metaFile   = "meta.inf"
	metaSum    = "meta.sum"
	stateFile  = "index.db"
	blockGlob  = "*.blk"
	msgsDir    = "msgs"
	streamsDir = "streams"
)

// Range is the sequences From to To, both included.
type Range struct{ From, To uint64 }

func (r Range) String() string {
	if r.From == r.To {
		return "event " + strconv.FormatUint(r.From, 10)
	}
	return fmt.Sprintf("events %d to %d", r.From, r.To)
}

// Bad is a damaged place in a message block.
type Bad struct {
	Block  string // the block's file name, e.g. 1.blk
	Offset int64  // where the damaged record starts
	Lost   Range  // the sequences that cannot be read
	// Size is how many bytes are damaged; 0 when nothing after Offset
	// in the block can be read.
	Size int64
	// Framing is set when the record's length is damaged.
	Framing bool
	seq     uint64 // the sequence the record is erased with
}

// Report is what Check found.
type Report struct {
	Data   string // the data directory
	Stream string // the stream's directory
	// Meta is set when the stream's metadata file (meta.inf) is missing,
	// unreadable or does not match its checksum: nats-server then skips
	// the stream, as if the journal were not there.
	Meta bool
	Bad  []Bad
	// Read are the blocks this check read, in order: every block for
	// Check, the new and changed ones and the last for CheckStart.
	Read []string
}

// Damaged reports whether anything needs a repair.
func (r Report) Damaged() bool { return r.Meta || len(r.Bad) > 0 }

// Lost are the sequences lost to the damaged blocks, in order.
func (r Report) Lost() []Range {
	var out []Range
	for _, b := range r.Bad {
		out = append(out, b.Lost)
	}
	return out
}

// String says what is damaged in one sentence, and what to do.
func (r Report) String() string {
	if !r.Damaged() {
		return fmt.Sprintf("the journal in %s is intact", r.Data)
	}
	var what []string
	if r.Meta {
		what = append(what, "its stream description (meta.inf) does not match its checksum")
	}
	for _, b := range r.Bad {
		what = append(what, fmt.Sprintf("%s cannot be read (%s is damaged at byte %d)", b.Lost, b.Block, b.Offset))
	}
	return fmt.Sprintf("the journal in %s is damaged: %s; run 'lumen journal repair --data %s' while Lumen is stopped (it keeps every intact event and records the lost ones as a gap)",
		r.Data, strings.Join(what, "; "), r.Data)
}

// ErrUnreadable is wrapped by Check's error when the data directory
// cannot be read at all.
var ErrUnreadable = errors.New("cannot read")

// StreamDir is where nats-server keeps the LUMEN stream of a data
// directory.
func StreamDir(data string) string {
	return filepath.Join(broker.StreamsDir(data), subject.Stream)
}

// Check reads the LUMEN stream's files under data and reports what is
// damaged. A directory without a journal (a new one, a hub's) has
// nothing damaged, and one a daemon holds is not read (its files change
// under the reader; the broker says it is in use). It reads every block.
func Check(data string) (Report, error) { return check(data, nil) }

// check is Check; with seen, a block seen intact and unchanged since is
// not read again (CheckStart).
func check(data string, seen *memo) (Report, error) {
	r := Report{Data: data, Stream: StreamDir(data)}
	if err := readable(data); err != nil {
		return r, err
	}
	if broker.InUse(data) {
		return r, nil
	}
	if _, err := os.Stat(r.Stream); errors.Is(err, os.ErrNotExist) {
		return r, nil
	} else if err != nil {
		return r, fmt.Errorf("%w %s: %w", ErrUnreadable, r.Stream, err)
	}
	r.Meta = !metaIntact(r.Stream)
	blocks, err := blockFiles(r.Stream)
	if err != nil {
		return r, err
	}
	var prev uint64 // the last intact sequence before the block
	for i, name := range blocks {
		path := filepath.Join(r.Stream, msgsDir, name)
		lastBlock := i == len(blocks)-1
		var st stamp
		if seen != nil && !lastBlock {
			if st, err = stampOf(path); err != nil {
				return r, fmt.Errorf("%w %s: %w", ErrUnreadable, name, err)
			}
			if last, ok := seen.intact(name, st); ok {
				prev = max(prev, last)
				continue
			}
		}
		buf, err := os.ReadFile(path)
		if err != nil {
			return r, fmt.Errorf("%w %s: %w", ErrUnreadable, name, err)
		}
		r.Read = append(r.Read, name)
		bads, last := scanBlock(name, blockIndex(name), buf, prev)
		if len(bads) > 0 && lastBlock && torn(bads) {
			// The end of the last block, written when the daemon was
			// killed: never acknowledged, and the server drops it.
			bads = bads[:len(bads)-1]
		}
		if seen != nil {
			seen.read(name, st, last, !lastBlock && len(bads) == 0)
		}
		r.Bad = append(r.Bad, bads...)
		prev = max(prev, last)
	}
	r.Bad = closeRanges(r.Bad, r.Stream, blocks)
	if seen != nil {
		seen.keep(blocks)
	}
	return r, nil
}

// readable fails with ErrUnreadable when data is not a directory this
// process can list.
func readable(data string) error {
	fi, err := os.Stat(data)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w %s: there is no such directory", ErrUnreadable, data)
	}
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrUnreadable, data, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w %s: it is a file, not a data directory", ErrUnreadable, data)
	}
	f, err := os.Open(data)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrUnreadable, data, err)
	}
	defer f.Close()
	if _, err := f.Readdirnames(1); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w %s: %w", ErrUnreadable, data, err)
	}
	return nil
}

// metaIntact reports whether the stream's meta.inf matches meta.sum, as
// nats-server checks it before it loads the stream.
func metaIntact(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return false
	}
	sum, err := os.ReadFile(filepath.Join(dir, metaSum))
	if err != nil {
		return false
	}
	return string(sum) == metaChecksum(b)
}

func metaChecksum(b []byte) string {
	key := sha256.Sum256([]byte(subject.Stream))
	hh, _ := highwayhash.NewDigest64(key[:]) // a 32-byte key never fails
	hh.Write(b)
	return hex.EncodeToString(hh.Sum(nil))
}

// blockFiles are the stream's block files in their order.
func blockFiles(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, msgsDir, blockGlob))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range paths {
		if blockIndex(filepath.Base(p)) > 0 {
			names = append(names, filepath.Base(p))
		}
	}
	slices.SortFunc(names, func(a, b string) int { return int(blockIndex(a)) - int(blockIndex(b)) })
	return names, nil
}

func blockIndex(name string) uint32 {
	n, err := strconv.ParseUint(strings.TrimSuffix(name, ".blk"), 10, 32)
	if err != nil {
		return 0
	}
	return uint32(n)
}

// record is one record of a block as the server frames it.
type record struct {
	off, size int64
	seq       uint64 // without the erased and tombstone bits
	live      bool   // neither erased nor a tombstone
	ok        bool   // its checksum matches
}

// scanBlock reads the records of a block and returns its damaged ones
// (each with the sequences from the last intact one before it, To still
// open: closeRanges closes it) and the block's last intact sequence.
func scanBlock(name string, index uint32, buf []byte, prev uint64) ([]Bad, uint64) {
	key := sha256.Sum256(fmt.Appendf(nil, "%s-%d", subject.Stream, index))
	hh, _ := highwayhash.NewDigest64(key[:])
	var bads []Bad
	last := prev
	for off := int64(0); off < int64(len(buf)); {
		rec, framed := readRecord(buf, off, hh)
		switch {
		case !framed:
			// Its length is damaged: the next intact record is found by
			// its checksum, and what lies between is lost.
			next := resync(buf, off, last, hh)
			bads = append(bads, Bad{Block: name, Offset: off, Size: next - off, Lost: Range{From: last + 1}, Framing: true, seq: last + 1})
			if next == int64(len(buf)) {
				bads[len(bads)-1].Size = 0
			}
			off = next
			continue
		case !rec.ok:
			bads = append(bads, Bad{Block: name, Offset: off, Size: rec.size, Lost: Range{From: last + 1}, seq: rec.seq})
		case rec.seq > last:
			last = rec.seq
		}
		off += rec.size
	}
	return bads, last
}

// resync is the offset of the first intact record after off, or the end
// of buf.
func resync(buf []byte, off int64, last uint64, hh hasher) int64 {
	for o := off + 1; o+hdrSize+hashSize <= int64(len(buf)); o++ {
		if rec, framed := readRecord(buf, o, hh); framed && rec.ok && rec.seq > last {
			return o
		}
	}
	return int64(len(buf))
}

type hasher interface {
	Reset()
	Write([]byte) (int, error)
	Sum([]byte) []byte
}

// readRecord frames the record at off and checks its checksum; framed
// is false when its length cannot be right.
func readRecord(buf []byte, off int64, hh hasher) (rec record, framed bool) {
	le := binary.LittleEndian
	if off+hdrSize > int64(len(buf)) {
		return rec, false
	}
	hdr := buf[off : off+hdrSize]
	rl, slen := le.Uint32(hdr[0:]), int(le.Uint16(hdr[20:]))
	hasHeaders := rl&hbit != 0
	rl &^= hbit
	shlen := slen
	if hasHeaders {
		shlen += 4
	}
	dlen := int(rl) - hdrSize
	if dlen < 0 || shlen > dlen-hashSize || off+int64(rl) > int64(len(buf)) || rl > maxRecord {
		return rec, false
	}
	data := buf[off+hdrSize : off+int64(rl)]
	hh.Reset()
	hh.Write(hdr[4:20])
	hh.Write(data[:slen])
	if hasHeaders {
		hh.Write(data[slen+4 : dlen-hashSize])
	} else {
		hh.Write(data[slen : dlen-hashSize])
	}
	seq := le.Uint64(hdr[4:])
	rec = record{off: off, size: int64(rl), seq: seq &^ (ebit | tbit), live: seq&(ebit|tbit) == 0,
		ok: bytes.Equal(hh.Sum(nil), data[dlen-hashSize:])}
	return rec, true
}

// torn reports whether the last damaged place of the last block is its
// very end, cut short: a record being written when the power went.
func torn(bads []Bad) bool {
	// A record whose length fits but whose checksum fails is damaged
	// (a torn write leaves zeros or too few bytes).
	return bads[len(bads)-1].Size == 0
}

// closeRanges sets each damaged place's last lost sequence: the one
// before the next intact record (of its block or a later one), or, at
// the end of the stream, the damaged record's own.
func closeRanges(bads []Bad, dir string, blocks []string) []Bad {
	for i := range bads {
		b := &bads[i]
		next, ok := nextIntact(dir, blocks, b.Block, b.Offset, b.Size)
		switch {
		case ok:
			b.Lost.To = next - 1
		case b.seq >= b.Lost.From && b.seq-b.Lost.From < 1<<20:
			b.Lost.To = b.seq
		default:
			b.Lost.To = b.Lost.From
		}
		b.Lost.To = max(b.Lost.To, b.Lost.From)
		if b.seq < b.Lost.From || b.seq > b.Lost.To {
			b.seq = b.Lost.From // its sequence is what is damaged
		}
	}
	return bads
}

// nextIntact is the sequence of the first intact record after offset off
// of block, in it (unless its framing is damaged) or in a later block.
func nextIntact(dir string, blocks []string, block string, off, size int64) (uint64, bool) {
	start := slices.Index(blocks, block)
	for i := start; i < len(blocks); i++ {
		buf, err := os.ReadFile(filepath.Join(dir, msgsDir, blocks[i]))
		if err != nil {
			return 0, false
		}
		key := sha256.Sum256(fmt.Appendf(nil, "%s-%d", subject.Stream, blockIndex(blocks[i])))
		hh, _ := highwayhash.NewDigest64(key[:])
		o := int64(0)
		if i == start {
			if size == 0 {
				continue // the rest of this block is lost
			}
			o = off + size
		}
		for o < int64(len(buf)) {
			rec, framed := readRecord(buf, o, hh)
			if !framed {
				break
			}
			if rec.ok {
				return rec.seq, true
			}
			o += rec.size
		}
	}
	return 0, false
}
