package broker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// fill writes a file on disk until the file system is full, and returns
// a func that removes it.
func fill(t *testing.T, disk string) func() {
	t.Helper()
	path := filepath.Join(disk, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break // ENOSPC, with whatever was written
		}
	}
	f.Close()
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// smallBroker starts a broker on a 32 MiB tmpfs, with a budget chosen
// from its free space as the daemon does.
func smallBroker(t *testing.T, reserve int64) (*broker.Broker, string, *lumentest.Buffer) {
	t.Helper()
	disk := lumentest.Tmpfs(t, 32*mib)
	data := filepath.Join(disk, "data")
	budget, err := broker.ResolveBudget(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	l := &lumentest.Buffer{}
	b := start(t, broker.Config{DataDir: data, Listen: "127.0.0.1:0", MaxBytes: broker.StreamBytes(budget.Bytes), StoreMax: budget.Bytes,
		Reserve: reserve, Logf: l.Logf})
	return b, disk, l
}

func TestRoomOnFullDisk(t *testing.T) {
	t.Parallel()
	b, disk, _ := smallBroker(t, 0)
	if err := b.Room(); err != nil {
		t.Fatalf("Room on an empty disk: %v", err)
	}
	free := fill(t, disk)
	err := b.Room()
	if err == nil || !strings.Contains(err.Error(), "the disk is full") || !strings.Contains(err.Error(), "free some space") {
		t.Fatalf("Room on a full disk = %v, want a sentence that says so and what to do", err)
	}
	j := journal.New(b.JetStream(), journal.WithRoom(b.Room))
	if err := j.Room(); !errors.Is(err, journal.ErrDiskFull) || !strings.HasPrefix(err.Error(), "the disk is full") {
		t.Errorf("journal Room = %v, want ErrDiskFull with the broker's sentence", err)
	}
	free()
	if err := b.Room(); err != nil {
		t.Errorf("Room once the disk has room again: %v", err)
	}
}

// TestReloadAfterWriteError lets a full disk reach JetStream (no
// reserve), which then keeps a write error in the stream and answers no
// append; once there is room again the broker reloads JetStream in
// process and the journal takes appends, with every acknowledged event
// still there.
func TestReloadAfterWriteError(t *testing.T) {
	t.Parallel()
	b, disk, l := smallBroker(t, -1)
	j := journal.New(b.JetStream(), journal.WithRoom(b.Room))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	subj := subject.In("k", "fired")
	body := make([]byte, 1000)
	acked := 0
	for range 10 {
		if _, err := j.Append(ctx, subj, body); err != nil {
			t.Fatal(err)
		}
		acked++
	}
	free := fill(t, disk)
	// Appends until one fails: the file store writes through a buffer,
	// so the first few may still fit.
	var failed error
	for i := 0; i < 5000 && failed == nil; i++ {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		_, failed = j.Append(actx, subj, body)
		acancel()
		if failed == nil {
			acked++
		}
	}
	if failed == nil {
		t.Fatal("a full disk took 5000 appends")
	}
	lumentest.WaitFor(t, 10*time.Second, "the broker to see the write error", func() bool { return b.Room() != nil })
	select {
	case <-b.WriteFailed():
	default:
		t.Error("WriteFailed's channel is open while Room reports the write error")
	}
	if err := j.Room(); !errors.Is(err, journal.ErrDiskFull) || !strings.Contains(err.Error(), "reopens the journal by itself") {
		t.Errorf("Room after a write error = %v, want ErrDiskFull that says the journal reopens", err)
	}
	free()
	lumentest.WaitFor(t, 30*time.Second, "the journal to take appends again", func() bool {
		if b.Room() != nil {
			return false
		}
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		defer acancel()
		_, err := j.Append(actx, subj, body)
		if err == nil {
			acked++
		}
		return err == nil
	})
	select {
	case <-b.WriteFailed():
		t.Error("WriteFailed's channel is still closed after the reload")
	default:
	}
	if !l.Contains("JetStream is reloaded") {
		t.Errorf("no log line says JetStream was reloaded: %q", l.String())
	}
	var n int
	if err := j.Replay(ctx, subj, 1, 0, func(journal.Msg) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n < acked {
		t.Errorf("the journal holds %d events after the reload, %d were acknowledged", n, acked)
	}
}

// BenchmarkRoom is the price of asking the disk for room before each
// new input: one statfs.
func BenchmarkRoom(b *testing.B) {
	br := lumentest.StartBus(b, broker.Config{})
	for b.Loop() {
		if err := br.Room(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFormerBudgetOnSmallDisk: a data directory made with the former
// default budget (a 1 GiB stream, more than the disk) starts on a small
// disk and takes the budget chosen from its free space.
func TestFormerBudgetOnSmallDisk(t *testing.T) {
	t.Parallel()
	old := t.TempDir()
	b := start(t, broker.Config{DataDir: old, Listen: "127.0.0.1:0"})
	if _, err := journal.New(b.JetStream()).Append(context.Background(), subject.In("k", "fired"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	b.Shutdown()

	disk := lumentest.Tmpfs(t, 64*mib)
	data := filepath.Join(disk, "data")
	if err := os.CopyFS(data, os.DirFS(old)); err != nil {
		t.Fatal(err)
	}
	budget, err := broker.ResolveBudget(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	b = start(t, broker.Config{DataDir: data, Listen: "127.0.0.1:0", MaxBytes: broker.StreamBytes(budget.Bytes), StoreMax: budget.Bytes, Logf: t.Logf})
	ctx := context.Background()
	s, err := b.JetStream().Stream(ctx, subject.Stream)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Config.MaxBytes; got != broker.StreamBytes(budget.Bytes) {
		t.Errorf("the stream's budget is %d, want %d", got, broker.StreamBytes(budget.Bytes))
	}
	j := journal.New(b.JetStream())
	if _, err := j.Append(ctx, subject.In("k", "fired"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if n, _, err := j.Size(ctx); err != nil || n == 0 {
		t.Errorf("journal size %d, %v", n, err)
	}
}
