package past_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/messages"
)

// History lists the names people use for the light as they change: the
// room as a move, aliases added and removed; the same names again, in
// any case or order, are no change.
func TestHistoryNames(t *testing.T) {
	j := scripted(t, "lamp",
		config(`[]`),
		config(`[]`, `"room":"Bedroom"`, `"aliases":["Bedroom Lamp","bedside"]`),
		config(`[]`, `"room":"bedroom"`, `"aliases":["BEDSIDE","bedroom  lamp"]`),
		config(`[]`, `"room":"study"`, `"aliases":["bedside","desk"]`),
		config(`[]`),
	)
	changes, err := past.History(context.Background(), j, "lamp")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Summary)
	}
	want := []string{
		"+state red, +state blue, +state cold, +state warm",
		"room (none) → bedroom, +alias bedroom lamp, +alias bedside",
		"room bedroom → study, +alias desk, -alias bedroom lamp",
		"room study → (none), -alias bedside, -alias desk",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("history:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(changes) == 4 {
		if r := changes[1].Changes.Room; r == nil || *r != (messages.Move{From: "", To: "bedroom"}) {
			t.Errorf("room move: %+v", r)
		}
	}
}
