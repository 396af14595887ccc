package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/web"
)

// lumen names' flags: what each sets, and what they refuse.
func TestNamesFlags(t *testing.T) {
	bedroom, empty := "bedroom", ""
	for _, tt := range []struct {
		name string
		f    cli.NamesFlags
		want string // the request as JSON; "" when it sets nothing
		err  string
	}{
		{"nothing: show", cli.NamesFlags{}, "", ""},
		{"room", cli.NamesFlags{Room: &bedroom}, `{"room":"bedroom"}`, ""},
		{"clear the room", cli.NamesFlags{Room: &empty}, `{"room":""}`, ""},
		{"aliases", cli.NamesFlags{Aliases: []string{"bedroom lamp", "bedside"}, AliasSet: true}, `{"aliases":["bedroom lamp","bedside"]}`, ""},
		{"no aliases", cli.NamesFlags{Room: &bedroom, NoAliases: true}, `{"room":"bedroom","aliases":[]}`, ""},
		{"both alias flags", cli.NamesFlags{Aliases: []string{"x"}, AliasSet: true, NoAliases: true}, "", "--alias and --no-aliases together"},
	} {
		q, set, err := tt.f.Request()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		got := ""
		if set {
			got = mustJSON(t, q)
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %s (%v), want %s", tt.name, got, err, tt.want)
		}
	}
}

// lumen names shows a light's names, sets them and says what changed and
// what people can now say; a name the light refuses is a usage error in
// its words, and nothing is sent.
func TestNames(t *testing.T) {
	cfg := daemon.DefaultConfig(t.TempDir())
	cfg.Listen, cfg.Lights, cfg.Sync, cfg.ClockMode, cfg.Hardware.Driver, cfg.HTTP = "127.0.0.1:0", []string{"bedroom_lamp"}, broker.SyncBatch, "trust", "sim", web.Off
	d, err := daemon.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	run := func(f cli.NamesFlags) (string, error) {
		var out bytes.Buffer
		term := &cli.Term{Stdout: &out, Stderr: &out, Server: d.URL(), Timeout: cli.Duration(10 * time.Second)}
		err := term.Names(ctx, f)
		return out.String(), err
	}
	bedroom, empty, bad := "Bedroom", "", "bed/room"
	for _, tt := range []struct {
		name string
		f    cli.NamesFlags
		want string
	}{
		{"none yet", cli.NamesFlags{}, "light bedroom_lamp has no room and no aliases: people can call it bedroom lamp only; give it names with\n  lumen names --light bedroom_lamp --room bedroom --alias \"bedroom lamp\" --alias bedside\n"},
		{"set both", cli.NamesFlags{Room: &bedroom, Aliases: []string{"Bedroom Lamp", "bedside"}, AliasSet: true},
			"names: room (none) → bedroom, +alias bedroom lamp, +alias bedside\nnow say e.g. \"turn off the bedside\" (lumen ask, the page)\n"},
		{"show", cli.NamesFlags{}, "room: bedroom\naliases: bedroom lamp, bedside\n"},
		{"the same again", cli.NamesFlags{Room: &bedroom}, "names: unchanged\nnow say e.g. \"turn off the bedroom\": the lights of room bedroom\n"},
		{"clear", cli.NamesFlags{Room: &empty, NoAliases: true}, "names: room bedroom → (none), -alias bedroom lamp, -alias bedside\n"},
	} {
		got, err := run(tt.f)
		if err != nil || got != tt.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", tt.name, err, got, tt.want)
		}
	}
	_, err = run(cli.NamesFlags{Room: &bad})
	if !errors.As(err, new(cli.UsageError)) || !strings.Contains(err.Error(), `room "bed/room" holds '/'`) {
		t.Errorf("a bad room: %v, want a usage error in the light's words", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
