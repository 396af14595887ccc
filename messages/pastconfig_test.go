package messages_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// The configuration in the past, read from a real light (the built
// binary) through the wire client: a change from the one before it, two
// inputs, the first change from nothing, and an input that is no change.
func TestPastConfigYAML(t *testing.T) {
	t.Parallel()
	d := lumentest.Start(t, t.TempDir(), "--hardware", "sim")
	nc := lumentest.Connect(t, d.URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := wire.New(nc).Light("demo")
	add, err := l.Mutate(ctx, messages.VerbCreateState, map[string]any{"name": "teal", "r": 0, "g": 128, "b": 128})
	if err != nil {
		t.Fatal(err)
	}
	del, err := l.Mutate(ctx, messages.VerbDeleteState, map[string]any{"name": "teal"})
	if err != nil {
		t.Fatal(err)
	}
	fired, err := l.Fire(ctx, "button_click")
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.History(ctx)
	if err != nil || len(h.Changes) < 3 {
		t.Fatalf("history: %v %+v", err, h)
	}
	first, beforeAdd := h.Changes[0].Seq, h.Changes[len(h.Changes)-3].Seq
	teal := "- name: teal\n"

	for _, c := range []struct {
		name           string
		seq            uint64
		wantPrev       uint64
		before, after  func(string) bool
		wantNotAChange bool
	}{
		{"a change, from the one before", add.Seq, beforeAdd,
			func(s string) bool { return !strings.Contains(s, teal) && strings.Contains(s, "states:") },
			func(s string) bool { return strings.Contains(s, teal) }, false},
		{"a deletion", del.Seq, add.Seq,
			func(s string) bool { return strings.Contains(s, teal) },
			func(s string) bool { return !strings.Contains(s, teal) }, false},
		{"the first change, from nothing", first, 0,
			func(s string) bool { return s == "" },
			func(s string) bool { return strings.Contains(s, "states:") }, false},
		{"an input that is no change", fired.Seq, 0, nil, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			prev, before, after, err := messages.ChangeYAML(ctx, l, c.seq)
			if c.wantNotAChange {
				if !errors.Is(err, messages.ErrNotAChange) {
					t.Fatalf("ChangeYAML(%d) = %v, want ErrNotAChange", c.seq, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if prev != c.wantPrev || !c.before(before) || !c.after(after) {
				t.Errorf("ChangeYAML(%d) = %d,\n%s\n→\n%s", c.seq, prev, before, after)
			}
			if strings.Contains(after, "vars:") {
				t.Errorf("the configuration has its variables:\n%s", after)
			}
		})
	}

	// Two inputs: the configuration after each.
	t.Run("two inputs", func(t *testing.T) {
		at, err := messages.ConfigYAMLAt(ctx, l, add.Seq)
		if err != nil || !strings.Contains(at, teal) {
			t.Fatalf("after %d: %v\n%s", add.Seq, err, at)
		}
		at, err = messages.ConfigYAMLAt(ctx, l, fired.Seq)
		if err != nil || strings.Contains(at, teal) {
			t.Fatalf("after %d: %v\n%s", fired.Seq, err, at)
		}
		// A sequence past the journal: the light's refusal, wrapped.
		_, err = messages.ConfigYAMLAt(ctx, l, 1<<40)
		var refusal *wire.Error
		if !errors.As(err, &refusal) || refusal.Code != 404 || !strings.HasPrefix(err.Error(), "messages: ") {
			t.Errorf("a sequence past the journal: %v", err)
		}
	})
}
