//go:build linux

package daemon_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/repair"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/web"
)

// A byte the SD card flips in a block the start's check remembered
// intact changes neither its size nor its times: the start does not read
// it again. What follows is honest, not good. The light does not
// crash-loop: it starts, and nats-server skips the damaged event (no gap
// is journaled); the full check (lumen journal repair, replay --data)
// still names it. (Measured by hand: a damaged record length is worse,
// nats-server cuts the block there at its start, and the events after it
// in the block are gone without a trace. Were the light to fail to start
// instead, the daemon would read the whole journal and name the damage:
// damagedOr.)
func TestDamageAfterTheStartsCheck(t *testing.T) {
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Blocks of 32 KB (the server's smallest, for a small budget).
	b, err := broker.Start(ctx, broker.Config{DataDir: data, Listen: "127.0.0.1:0", MaxBytes: 120_000, Lights: []string{"demo"}})
	if err != nil {
		t.Fatal(err)
	}
	j := journal.New(b.JetStream())
	blk := filepath.Join(repair.StreamDir(data), "msgs", "1.blk")
	for {
		if _, err := j.Append(ctx, subject.In("demo", messages.InFired), []byte(`{"transition":"tick"}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(blk), "2.blk")); err == nil {
			break
		}
	}
	b.Shutdown()
	if rep, err := repair.CheckStart(data); err != nil || rep.Damaged() {
		t.Fatalf("the first check: %s, %v", rep, err)
	}

	// The medium flips a byte in the body of the tenth record of 1.blk;
	// the file system's times and size stay those remembered.
	buf, err := os.ReadFile(blk)
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	for range 10 {
		off += int(binary.LittleEndian.Uint32(buf[off:]) &^ (1 << 31))
	}
	buf[off+int(binary.LittleEndian.Uint32(buf[off:])&^(1<<31))-12] ^= 0x01
	if err := os.WriteFile(blk, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	restamp(t, data, blk)

	cfg := daemon.DefaultConfig(data)
	cfg.Listen, cfg.Lights, cfg.Sync, cfg.ClockMode, cfg.Hardware.Driver = "127.0.0.1:0", []string{"demo"}, broker.SyncBatch, "trust", "sim"
	cfg.HTTP, cfg.Logf = web.Off, testLog(t)
	d, err := daemon.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Run(ctx); err != nil {
		t.Fatalf("Run on a journal damaged after its check: %v", err)
	}
	d.Close()
	if rep, err := repair.Check(data); err != nil || !strings.Contains(rep.String(), "event 11 cannot be read") {
		t.Errorf("the full check after the start: %s, %v", rep, err)
	}
}

// restamp makes the start's check remember blk with its stamp now, as if
// it had been read intact: what a flip by the medium itself leaves.
func restamp(t *testing.T, data, blk string) {
	t.Helper()
	path := filepath.Join(data, repair.CheckedFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(blk, &st); err != nil {
		t.Fatal(err)
	}
	e := m["blocks"][filepath.Base(blk)]
	if e == nil {
		t.Fatalf("%s is not remembered: %s", blk, b)
	}
	e["size"], e["mtime_ns"], e["ctime_ns"], e["inode"] = st.Size, st.Mtim.Nano(), st.Ctim.Nano(), st.Ino
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
