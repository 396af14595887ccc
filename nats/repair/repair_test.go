package repair_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/repair"
	"github.com/lumen-home/lumen/nats/subject"
)

// journalOf writes n events of light demo to a fresh data dir and stops
// its server; it returns the dir and each event's offset in 1.blk.
func journalOf(t *testing.T, n int) (string, []int64) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := broker.Start(ctx, broker.Config{DataDir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	j := journal.New(b.JetStream())
	for i := 1; i <= n; i++ {
		if _, err := j.Append(ctx, subject.In("demo", messages.InState), fmt.Appendf(nil, `{"n":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	b.Shutdown()
	rep, err := repair.Check(dir)
	if err != nil || rep.Damaged() {
		t.Fatalf("fresh journal: %v, %v", rep, err)
	}
	return dir, offsets(t, dir)
}

// offsets are where the records of 1.blk start, read from their lengths.
func offsets(t *testing.T, dir string) []int64 {
	buf, err := os.ReadFile(block(dir))
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for off := int64(0); off < int64(len(buf)); {
		offs = append(offs, off)
		rl := int64(buf[off]) | int64(buf[off+1])<<8 | int64(buf[off+2])<<16 | int64(buf[off+3]&0x7f)<<24
		off += rl
	}
	return offs
}

func block(dir string) string { return filepath.Join(repair.StreamDir(dir), "msgs", "1.blk") }

func flip(t *testing.T, path string, at int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[at] ^= 0x01
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// events reads the whole journal back with a private server.
func events(t *testing.T, dir string) (seqs []uint64, gaps []messages.OutGapData) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := broker.Inspect(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	err = journal.New(b.JetStream()).Replay(ctx, "", 0, 0, func(m journal.Msg) error {
		seqs = append(seqs, m.Seq)
		if strings.HasSuffix(m.Subject, "."+messages.OutGap) {
			var env messages.Envelope
			var g messages.OutGapData
			if err := messages.DecodeEnvelope(m.Data, &env); err != nil {
				return err
			}
			if err := json.Unmarshal(env.Data, &g); err != nil {
				return err
			}
			gaps = append(gaps, g)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seqs, gaps
}

func TestRepairKeepsEveryIntactEvent(t *testing.T) {
	tests := []struct {
		name     string
		record   int   // which record (0: seq 1) to damage
		at       int64 // the byte of it to flip
		lost     repair.Range
		wantSeqs []uint64 // read back after the repair, the gap's included
	}{
		{name: "body", record: 2, at: 40, lost: repair.Range{From: 3, To: 3}, wantSeqs: []uint64{1, 2, 4, 5, 6}},
		{name: "sequence", record: 2, at: 5, lost: repair.Range{From: 3, To: 3}, wantSeqs: []uint64{1, 2, 4, 5, 6}},
		{name: "first", record: 0, at: 30, lost: repair.Range{From: 1, To: 1}, wantSeqs: []uint64{2, 3, 4, 5, 6}},
		{name: "length", record: 2, at: 1, lost: repair.Range{From: 3, To: 3}, wantSeqs: []uint64{1, 2, 4, 5, 6}},
		{name: "last block end", record: 4, at: 40, lost: repair.Range{From: 5, To: 5}, wantSeqs: []uint64{1, 2, 3, 4, 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, offs := journalOf(t, 5)
			flip(t, block(dir), offs[tc.record]+tc.at)
			rep, err := repair.Check(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Lost(); len(got) != 1 || got[0] != tc.lost {
				t.Fatalf("lost %v, want %v (%s)", got, tc.lost, rep)
			}
			if s := rep.String(); !strings.Contains(s, tc.lost.String()+" cannot be read") || !strings.Contains(s, "lumen journal repair --data "+dir) {
				t.Errorf("sentence: %s", s)
			}
			res, err := repair.Repair(context.Background(), dir, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(res.Lights) != "[demo]" {
				t.Errorf("gap journaled for %v", res.Lights)
			}
			if rep, err := repair.Check(dir); err != nil || rep.Damaged() {
				t.Fatalf("after the repair: %s, %v", rep, err)
			}
			seqs, gaps := events(t, dir)
			if fmt.Sprint(seqs) != fmt.Sprint(tc.wantSeqs) {
				t.Errorf("events %v, want %v", seqs, tc.wantSeqs)
			}
			if len(gaps) != 1 || gaps[0].From != tc.lost.From || gaps[0].To != tc.lost.To {
				t.Errorf("gaps %+v, want %v", gaps, tc.lost)
			}
		})
	}
}

// A record cut short at the end of the last block is what a power cut
// leaves of an event being written, never acknowledged: the server drops
// it, and it is no damage that stops a start.
func TestTornTailIsNoDamage(t *testing.T) {
	dir, _ := journalOf(t, 3)
	fi, err := os.Stat(block(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(block(dir), fi.Size()-10); err != nil {
		t.Fatal(err)
	}
	if rep, err := repair.Check(dir); err != nil || rep.Damaged() {
		t.Fatalf("a torn tail: %s, %v", rep, err)
	}
	if seqs, _ := events(t, dir); fmt.Sprint(seqs) != "[1 2]" {
		t.Errorf("events %v, want [1 2]", seqs)
	}
}

// A data dir that is a file cannot be read, and says so.
func TestCheckUnreadable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := repair.Check(file)
	if !errors.Is(err, repair.ErrUnreadable) || !strings.Contains(err.Error(), "cannot read "+file) {
		t.Fatalf("Check of a file: %v", err)
	}
}

// blocksOf writes events of 1 KB of light demo to a fresh data dir in
// blocks of 32 KB (the server's smallest, for a small budget) until it
// has n blocks, and stops its server.
func blocksOf(t *testing.T, n int) (dir string, blocks []string) {
	t.Helper()
	dir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := broker.Start(ctx, broker.Config{DataDir: dir, Listen: "127.0.0.1:0", MaxBytes: 120_000})
	if err != nil {
		t.Fatal(err)
	}
	j := journal.New(b.JetStream())
	body := []byte(`{"pad":"` + strings.Repeat("x", 1000) + `"}`)
	for len(blocks) < n {
		if _, err := j.Append(ctx, subject.In("demo", messages.InState), body); err != nil {
			t.Fatal(err)
		}
		blocks = blockNames(t, dir)
	}
	b.Shutdown()
	return dir, blocks
}

func blockNames(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repair.StreamDir(dir), "msgs", "*.blk"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	slices.Sort(names) // fewer than 10
	return names
}

// A second start's check of an unchanged journal reads only the last
// block; the full check (journal repair, replay --data) reads them all.
func TestCheckStartReadsOnlyTheLastBlock(t *testing.T) {
	dir, blocks := blocksOf(t, 3)
	last := blocks[len(blocks)-1:]
	for i, want := range [][]string{blocks, last, last} {
		rep, err := repair.CheckStart(dir)
		if err != nil || rep.Damaged() {
			t.Fatalf("start %d: %s, %v", i+1, rep, err)
		}
		if fmt.Sprint(rep.Read) != fmt.Sprint(want) {
			t.Errorf("start %d read %v, want %v", i+1, rep.Read, want)
		}
	}
	if rep, err := repair.Check(dir); err != nil || fmt.Sprint(rep.Read) != fmt.Sprint(blocks) {
		t.Errorf("the full check read %v (%v), want %v", rep.Read, err, blocks)
	}
	if err := repair.Forget(dir); err != nil {
		t.Fatal(err)
	}
	if rep, _ := repair.CheckStart(dir); fmt.Sprint(rep.Read) != fmt.Sprint(blocks) {
		t.Errorf("after Forget read %v, want %v", rep.Read, blocks)
	}
}

// A block written after a start's check remembered it intact is read
// again at the next start, and its damage named, also when whoever wrote
// it put its modification time back.
func TestCheckStartReadsAChangedBlock(t *testing.T) {
	for _, keepTime := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep mtime %v", keepTime), func(t *testing.T) {
			dir, blocks := blocksOf(t, 3)
			if rep, err := repair.CheckStart(dir); err != nil || rep.Damaged() {
				t.Fatalf("first start: %s, %v", rep, err)
			}
			fi, err := os.Stat(block(dir))
			if err != nil {
				t.Fatal(err)
			}
			offs := offsets(t, dir)
			flip(t, block(dir), offs[1]+40)
			if keepTime {
				if err := os.Chtimes(block(dir), fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := repair.CheckStart(dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{blocks[0], blocks[len(blocks)-1]}; fmt.Sprint(rep.Read) != fmt.Sprint(want) {
				t.Errorf("read %v, want %v", rep.Read, want)
			}
			if got := rep.Lost(); len(got) != 1 || got[0] != (repair.Range{From: 2, To: 2}) {
				t.Errorf("lost %v, want event 2 (%s)", got, rep)
			}
			// Still damaged, so still read, until it is repaired.
			if rep, _ := repair.CheckStart(dir); !rep.Damaged() || rep.Read[0] != blocks[0] {
				t.Errorf("next start: read %v, %s", rep.Read, rep)
			}
		})
	}
}
