package main_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/nats/repair"
)

// stoppedJournal runs a daemon on a fresh data dir, moves its light
// through a few states and stops it.
func stoppedJournal(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	d := startDaemon(t, dir)
	for _, s := range []string{"red", "blue", "red", "off"} {
		if out, code := runCLI(t, d.URL, "state", s); code != 0 {
			t.Fatalf("state %s: %s", s, out)
		}
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// up runs lumen up on dir, which is expected to refuse to start.
func up(t *testing.T, dir string) (string, int) {
	t.Helper()
	return runCLI(t, "", "up", "--data", dir, "--listen", "127.0.0.1:0", "--http", "off")
}

// flipEvent flips one byte inside the n-th record (from 0) whose subject
// ends with suffix in the LUMEN stream's first block, and returns its
// sequence.
func flipEvent(t *testing.T, dir, suffix string, n int) uint64 {
	t.Helper()
	path := filepath.Join(repair.StreamDir(dir), "msgs", "1.blk")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	for off := 0; off+22 <= len(b); {
		rl := int(le.Uint32(b[off:]) &^ (1 << 31))
		slen := int(le.Uint16(b[off+20:]))
		if strings.HasSuffix(string(b[off+22:off+22+slen]), suffix) {
			if n == 0 {
				seq := le.Uint64(b[off+4:])
				b[off+rl-20] ^= 0x01 // in the event's body
				if err := os.WriteFile(path, b, 0o600); err != nil {
					t.Fatal(err)
				}
				return seq
			}
			n--
		}
		off += rl
	}
	t.Fatalf("no event %d on *%s in %s", n, suffix, path)
	return 0
}

// A flipped byte in a journal block: lumen up names the lost event and
// the repair instead of starting a light that fails; the repair keeps
// every other event and journals a gap; the light starts, and replay
// --verify passes.
func TestDamagedJournalBlock(t *testing.T) {
	for _, suffix := range []string{".evt.in.state", ".evt.out.state"} {
		t.Run(strings.TrimPrefix(suffix, ".evt."), func(t *testing.T) { damagedJournalBlock(t, suffix) })
	}
}

func damagedJournalBlock(t *testing.T, suffix string) {
	dir := stoppedJournal(t)
	lost := flipEvent(t, dir, suffix, 2) // of "red" after "blue"

	out, code := up(t, dir)
	want := fmt.Sprintf("event %d cannot be read", lost)
	if code == 0 || !strings.Contains(out, want) || !strings.Contains(out, "lumen journal repair --data "+dir) || strings.Contains(out, "ready") {
		t.Fatalf("lumen up on a damaged journal: exit %d, want a refusal saying %q and the repair:\n%s", code, want, out)
	}
	if out, code := runCLI(t, "", "replay", "--data", dir); code == 0 || !strings.Contains(out, want) {
		t.Errorf("offline replay of a damaged journal: exit %d:\n%s", code, out)
	}

	out, code = runCLI(t, "", "journal", "repair", "--data", dir)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("removed event %d", lost)) || !strings.Contains(out, "journaled a gap naming them for light demo") {
		t.Fatalf("journal repair: exit %d:\n%s", code, out)
	}
	if out, code := runCLI(t, "", "replay", "--data", dir, "--verify"); code != 0 || !strings.Contains(out, "every recorded output matches") {
		t.Fatalf("replay --verify after the repair: exit %d:\n%s", code, out)
	}

	d := startDaemon(t, dir)
	if out, code := runCLI(t, d.URL, "journal", "repair", "--data", dir); code == 0 || !strings.Contains(out, "Lumen is running on "+dir) {
		t.Errorf("repair of a running daemon's dir: exit %d:\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "state", "blue"); code != 0 {
		t.Fatalf("the light after the repair: %s", out)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, "", "replay", "--data", dir, "--verify"); code != 0 || !strings.Contains(out, "every recorded output matches") {
		t.Fatalf("replay --verify after a start on the repaired journal: exit %d:\n%s", code, out)
	}
	if out, code := runCLI(t, "", "journal", "repair", "--data", dir); code != 0 || !strings.Contains(out, "intact: nothing to repair") {
		t.Errorf("a second repair: exit %d:\n%s", code, out)
	}
}

// A damaged meta.inf: nats-server skips the stream, so offline replay
// found no journal; the same repair writes it afresh and keeps the
// events.
func TestDamagedStreamMeta(t *testing.T) {
	dir := stoppedJournal(t)
	meta := filepath.Join(repair.StreamDir(dir), "meta.inf")
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(meta, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runCLI(t, "", "replay", "--data", dir)
	if code == 0 || !strings.Contains(out, "stream description (meta.inf)") || !strings.Contains(out, "lumen journal repair --data "+dir) {
		t.Fatalf("offline replay with a damaged meta.inf: exit %d:\n%s", code, out)
	}
	if out, code := up(t, dir); code == 0 || !strings.Contains(out, "lumen journal repair --data "+dir) {
		t.Fatalf("lumen up with a damaged meta.inf: exit %d:\n%s", code, out)
	}
	if out, code := runCLI(t, "", "journal", "repair", "--data", dir); code != 0 || !strings.Contains(out, "wrote its stream description (meta.inf) afresh") {
		t.Fatalf("journal repair: exit %d:\n%s", code, out)
	}
	out, code = runCLI(t, "", "replay", "--data", dir, "--verify")
	if code != 0 || !strings.Contains(out, "every recorded output matches") || !strings.Contains(out, "state off") {
		t.Fatalf("replay --verify after the repair: exit %d:\n%s", code, out)
	}
	d := startDaemon(t, dir)
	if out, code := runCLI(t, d.URL, "state", "blue"); code != 0 {
		t.Fatalf("the light after the repair: %s", out)
	}
}

// Offline replay on a directory it cannot read says so, not that a
// daemon may still run on it.
func TestReplayUnreadableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(file, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runCLI(t, "", "replay", "--data", file)
	if code == 0 || !strings.Contains(out, "cannot read "+file) || strings.Contains(out, "still running") {
		t.Fatalf("replay --data FILE: exit %d:\n%s", code, out)
	}
}
