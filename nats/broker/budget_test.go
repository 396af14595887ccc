package broker_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

func TestChooseBudget(t *testing.T) {
	tests := []struct {
		name       string
		free, used int64
		want       int64
	}{
		{name: "a large disk: the cap", free: 100 * gib, want: gib},
		{name: "a 96 MB disk", free: 90 * mib, want: 90 * mib / 4 * 3},
		{name: "the journal counts as free", free: 40 * mib, used: 40 * mib, want: 60 * mib},
		{name: "a full disk with a journal", free: 0, used: 8 * mib, want: 6 * mib},
		{name: "nothing", want: 0},
		{name: "nonsense is nothing", free: -5, used: -5, want: 0},
		{name: "just under the cap", free: 1364 * mib, want: 1023 * mib},
		{name: "just over the cap", free: 1368 * mib, want: gib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := broker.ChooseBudget(tt.free, tt.used); got != tt.want {
				t.Errorf("ChooseBudget(%d, %d) = %d, want %d", tt.free, tt.used, got, tt.want)
			}
		})
	}
}

func TestFloorBudget(t *testing.T) {
	tests := []struct {
		name         string
		budget, used int64
		want         int64
	}{
		{name: "room to spare", budget: 48 * mib, used: 10 * mib, want: 48 * mib},
		{name: "the journal at 3/4 already", budget: 40 * mib, used: 30 * mib, want: 40 * mib},
		{name: "below the journal: raised so it sits at 3/4", budget: 6 * mib, used: 30 * mib, want: 40 * mib},
		{name: "empty journal", budget: 2 * mib, want: 2 * mib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := broker.FloorBudget(tt.budget, tt.used); got != tt.want {
				t.Errorf("FloorBudget(%d, %d) = %d, want %d", tt.budget, tt.used, got, tt.want)
			}
		})
	}
}

func TestBudgetShares(t *testing.T) {
	tests := []struct {
		budget, stream, reserve int64
	}{
		{budget: gib, stream: gib / 8 * 7, reserve: 8 * mib},
		{budget: 48 * mib, stream: 42 * mib, reserve: 6 * mib},
		{budget: 200_000, stream: 175_000, reserve: 25_000},
	}
	for _, tt := range tests {
		if got := broker.StreamBytes(tt.budget); got != tt.stream {
			t.Errorf("StreamBytes(%d) = %d, want %d", tt.budget, got, tt.stream)
		}
		if got := broker.Reserve(tt.budget); got != tt.reserve {
			t.Errorf("Reserve(%d) = %d, want %d", tt.budget, got, tt.reserve)
		}
	}
}

// journalOf makes dataDir hold a journal of size bytes (a sparse file:
// only its size counts).
func journalOf(t *testing.T, dataDir string, size int64) {
	t.Helper()
	dir := filepath.Join(dataDir, "jetstream", "$G", "streams", "LUMEN", "msgs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "1.blk"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

func TestResolveBudget(t *testing.T) {
	t.Run("given", func(t *testing.T) {
		dir := t.TempDir()
		b, err := broker.ResolveBudget(dir, 50_000_000)
		if err != nil {
			t.Fatal(err)
		}
		if b.Bytes != 50_000_000 || !strings.Contains(b.Note, "--max-bytes") {
			t.Errorf("budget %d (%s), want the given 50000000", b.Bytes, b.Note)
		}
		if _, err := os.Stat(filepath.Join(dir, broker.BudgetFile)); err == nil {
			t.Errorf("a given budget was kept in %s: it is the operator's to change", broker.BudgetFile)
		}
	})
	t.Run("given below the journal is raised, loudly", func(t *testing.T) {
		dir := t.TempDir()
		journalOf(t, dir, 3*mib)
		b, err := broker.ResolveBudget(dir, mib)
		if err != nil {
			t.Fatal(err)
		}
		if b.Bytes != 4*mib || !strings.Contains(b.Note, "raised to 4.0 MiB") {
			t.Errorf("budget %d (%s), want 4 MiB and why", b.Bytes, b.Note)
		}
	})
	t.Run("kept from the first start", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, broker.BudgetFile), []byte(`{"max_bytes":7340032,"free":9786709,"journal":0}`), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := broker.ResolveBudget(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		if b.Bytes != 7*mib || !strings.Contains(b.Note, "chosen at the first start") {
			t.Errorf("budget %d (%s), want the kept 7 MiB", b.Bytes, b.Note)
		}
	})
	t.Run("a kept one below the journal is raised", func(t *testing.T) {
		dir := t.TempDir()
		journalOf(t, dir, 12*mib)
		if err := os.WriteFile(filepath.Join(dir, broker.BudgetFile), []byte(`{"max_bytes":7340032}`), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := broker.ResolveBudget(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		if b.Bytes != 16*mib || !strings.Contains(b.Note, "raised") {
			t.Errorf("budget %d (%s), want 16 MiB and why", b.Bytes, b.Note)
		}
	})
	t.Run("a broken file says how to fix it", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, broker.BudgetFile), []byte(`{"max_bytes":-1}`), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := broker.ResolveBudget(dir, 0)
		if err == nil || !strings.Contains(err.Error(), "remove it") {
			t.Errorf("ResolveBudget of a broken %s = %v, want what to do", broker.BudgetFile, err)
		}
	})
}

// TestResolveBudgetSmallDisk: on a disk smaller than the default budget
// the budget is chosen from its free space, once: after the journal and
// other files have taken most of the disk, it is not chosen again lower.
func TestResolveBudgetSmallDisk(t *testing.T) {
	disk := lumentest.Tmpfs(t, 64*mib)
	data := filepath.Join(disk, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := broker.ResolveBudget(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.Bytes != 48*mib || !strings.Contains(b.Note, "48.0 MiB: 3/4 of the 64.0 MiB free") {
		t.Fatalf("budget %d (%s), want 48 MiB from the free space", b.Bytes, b.Note)
	}
	journalOf(t, data, 20*mib)
	filler, err := os.Create(filepath.Join(disk, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer filler.Close()
	if _, err := filler.Write(make([]byte, 40*mib)); err != nil {
		t.Fatal(err)
	}
	// A sparse journal takes no room: 24 MiB are free, which with the
	// journal's 20 would choose 33 MiB now.
	again, err := broker.ResolveBudget(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	if again.Bytes != 48*mib || !strings.Contains(again.Note, "chosen at the first start") {
		t.Errorf("second start: budget %d (%s), want the kept 48 MiB", again.Bytes, again.Note)
	}
}

// TestResolveBudgetTinyDisk: a disk that cannot hold a journal is
// refused at start with what to do.
func TestResolveBudgetTinyDisk(t *testing.T) {
	disk := lumentest.Tmpfs(t, 1*mib)
	_, err := broker.ResolveBudget(filepath.Join(disk, "data"), 0)
	if err == nil || !strings.Contains(err.Error(), "give --data a larger disk") {
		t.Fatalf("ResolveBudget on a 1 MiB disk = %v, want a refusal that says what to do", err)
	}
}
