package messages_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

func TestNormalLightNames(t *testing.T) {
	many := make([]string, messages.MaxAliases+1)
	for i := range many {
		many[i] = fmt.Sprint("lamp ", i)
	}
	tests := []struct {
		name        string
		room        string
		aliases     []string
		wantRoom    string
		wantAliases []string
		wantErr     string // in the error; "" for none
	}{
		{name: "none"},
		{name: "kept lower-case, spaces collapsed and trimmed",
			room: "  Bed  Room ", aliases: []string{"Bedroom   Lamp", "BEDSIDE"},
			wantRoom: "bed room", wantAliases: []string{"bedroom lamp", "bedside"}},
		{name: "digits, '-', '_', apostrophes and letters of any script",
			room: "Küche", aliases: []string{"kid's lamp", "Kid’s desk", "lamp-2", "lamp_3", "ночник"},
			wantRoom: "küche", wantAliases: []string{"kid's lamp", "kid's desk", "lamp-2", "lamp_3", "ночник"}},
		{name: "an alias may be the room", room: "bedroom", aliases: []string{"Bedroom"},
			wantRoom: "bedroom", wantAliases: []string{"bedroom"}},
		{name: "40 characters", room: strings.Repeat("a", 40), wantRoom: strings.Repeat("a", 40)},
		{name: "40 characters once spaces are collapsed", room: " a" + strings.Repeat(" ", 50) + strings.Repeat("b", 38),
			wantRoom: "a " + strings.Repeat("b", 38)},
		{name: "16 aliases", aliases: many[:16], wantAliases: many[:16]},

		{name: "a room too long", room: strings.Repeat("a", 41), wantErr: `"… is 41 characters long; a room or an alias is at most 40`},
		{name: "a room of spaces", room: "   ", wantErr: `room "   " is only spaces; give it 1 to 40 characters, or leave it out`},
		{name: "a room with a slash", room: "bed/room", wantErr: `room "bed/room" holds '/'; a room or an alias is letters, digits, spaces, '-', '_' and apostrophes only`},
		{name: "a room with a tab", room: "bed\troom", wantErr: `room "bed\troom" holds '\t'`},
		{name: "an empty alias", aliases: []string{"lamp", ""}, wantErr: `aliases[1] "" is empty`},
		{name: "an alias with a comma", aliases: []string{"lamp, desk"}, wantErr: `aliases[0] "lamp, desk" holds ','`},
		{name: "an alias with an emoji", aliases: []string{"lamp 🌙"}, wantErr: `aliases[0] "lamp 🌙" holds '🌙'`},
		{name: "an alias too long", aliases: []string{strings.Repeat("é", 41)}, wantErr: `aliases[0] "éééééééééééééééééééééééééééééééééééééééé"… is 41 characters long`},
		{name: "invalid UTF-8", aliases: []string{"lamp\xff"}, wantErr: `aliases[0] "lamp\xff" is not valid UTF-8`},
		{name: "a duplicate once normalised", aliases: []string{"bedside", "desk", "Bed  Side ", "BEDSIDE"},
			wantErr: `aliases[3] "BEDSIDE" is aliases[0] "bedside" again (both are "bedside"); list each name once`},
		{name: "17 aliases", aliases: many, wantErr: "aliases lists 17 names; a light has at most 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			room, aliases, err := messages.NormalLightNames(tt.room, tt.aliases)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want %s", err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("error %v", err)
			case room != tt.wantRoom || !slices.Equal(aliases, tt.wantAliases):
				t.Errorf("got %q %q, want %q %q", room, aliases, tt.wantRoom, tt.wantAliases)
			}
		})
	}
}

// A name as the light keeps it is kept as it is: normalising is
// idempotent, so an export applied again changes nothing.
func TestNormalLightNameIsIdempotent(t *testing.T) {
	for _, name := range []string{"Bed  Room", " kid’s Lamp ", "a-b_c", "Küche 2"} {
		once, err := messages.NormalLightName("room", name)
		if err != nil {
			t.Fatal(err)
		}
		twice, err := messages.NormalLightName("room", once)
		if err != nil || twice != once {
			t.Errorf("%q → %q → %q, %v", name, once, twice, err)
		}
	}
}
