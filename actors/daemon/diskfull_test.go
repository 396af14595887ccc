package daemon_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/wire"
)

// TestWriteErrorRecovers lets a full disk reach JetStream (no reserve:
// the daemon never refuses for want of room first), as when the disk
// fills between the check and the write. nats-server then keeps a write
// error in the stream; once space is freed the daemon reloads JetStream
// and its light takes commands again, without a restart, and its journal
// replays exactly. Meanwhile every command is answered in time: a fire
// the disk took succeeds, the others get 507, and the light answers get.
func TestWriteErrorRecovers(t *testing.T) {
	disk := lumentest.Tmpfs(t, 32<<20)
	data := filepath.Join(disk, "data")
	d := startWith(t, func(c *daemon.Config) { c.Data, c.DiskReserve, c.Sync = data, -1, broker.SyncAlways }, "k")
	nc, err := nats.Connect(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := wire.New(nc, wire.WithTimeout(3*time.Second))
	ctx := context.Background()
	fire := func() error {
		return c.Call(ctx, "k", messages.VerbFire, messages.FireRequest{Transition: "button_click"}, nil)
	}
	if err := fire(); err != nil {
		t.Fatal(err)
	}

	filler := filepath.Join(disk, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for buf := make([]byte, 64<<10); ; {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()
	// The command that meets the full disk is answered too (nats-server
	// answers no append it could not store; the journal asks again), and
	// the light keeps answering reads.
	var we *wire.Error
	for fires := 1; ; fires++ {
		err := fire()
		if errors.As(err, &we) && we.Code == 507 {
			if strings.Contains(we.Msg, "journaled this command") {
				// Taken, but its outputs met the full disk: it
				// takes effect once there is room.
				t.Logf("fire %d: %v", fires, we)
				continue
			}
			break
		}
		if err != nil {
			t.Fatalf("fire %d after the disk filled: %v, want success or 507", fires, err)
		}
		if fires == 1000 {
			t.Fatal("1000 fires after the disk filled, none refused")
		}
	}
	for range 3 {
		if err := fire(); !errors.As(err, &we) || we.Code != 507 {
			t.Fatalf("a fire after the 507: %v, want 507", err)
		}
		if err := c.Call(ctx, "k", messages.VerbGet, nil, new(messages.GetReply)); err != nil {
			t.Fatalf("get while the disk is full: %v", err)
		}
	}
	t.Logf("full: %v", we)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	lumentest.WaitFor(t, 60*time.Second, "the light to take commands again", func() bool { return fire() == nil })
	var g messages.GetReply
	if err := c.Call(ctx, "k", messages.VerbGet, nil, &g); err != nil {
		t.Fatal(err)
	}
	if err := fire(); err != nil {
		t.Fatalf("a second command after the reload: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := broker.Inspect(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	// No input is left without its outputs: the one journaled as the
	// disk filled took effect once there was room.
	sum, err := past.Replay{Light: "k", Verify: true}.Run(ctx, journal.New(b.JetStream()))
	if err != nil || sum.Pending != 0 {
		t.Errorf("replay --verify after the write error: %+v, %v", sum, err)
	}
}
