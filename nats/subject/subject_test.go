package subject_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/nats/subject"
)

func TestValidLight(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  string // substring of the error, "" for valid
	}{
		{name: "simple", given: "kitchen"},
		{name: "all allowed characters", given: "a-z_0-9"},
		{name: "single digit", given: "7"},
		{name: "empty", given: "", want: "is empty"},
		{name: "uppercase", given: "Kitchen", want: "lowercase letters"},
		{name: "dot", given: "a.b", want: "not allowed"},
		{name: "wildcard star", given: "*", want: "not allowed"},
		{name: "wildcard gt", given: ">", want: "not allowed"},
		{name: "space", given: "living room", want: "not allowed"},
		{name: "unicode", given: "küche", want: "not allowed"},
		{name: "reserved fleet", given: "fleet", want: "reserved"},
		{name: "reserved group", given: "group", want: "reserved"},
		{name: "reserved sys", given: "sys", want: "reserved"},
		{name: "reserved prefix is fine", given: "fleet2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := subject.ValidLight(tt.given)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ValidLight(%q) = %v, want nil", tt.given, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ValidLight(%q) = %v, want error containing %q", tt.given, err, tt.want)
			}
			if !errors.Is(err, subject.ErrInvalidName) {
				t.Fatalf("ValidLight(%q) = %v, want errors.Is ErrInvalidName", tt.given, err)
			}
			if strings.Contains(err.Error(), "subject:") || strings.Contains(err.Error(), "invalid name") {
				t.Fatalf("error %q has an internal prefix: it is a sentence for people", err)
			}
		})
	}
}

// A person types a light's name in any case; a name with spaces is
// answered with the name to use.
func TestLightName(t *testing.T) {
	for _, tt := range []struct {
		typed, want, err string
	}{
		{typed: "kitchen", want: "kitchen"},
		{typed: "Kitchen", want: "kitchen"},
		{typed: " HALL-2 ", want: "hall-2"},
		{typed: "living room", err: `light name "living room" is not allowed: names are lowercase letters a-z, digits 0-9, '_' and '-': use living_room`},
		{typed: "Living  Room!", err: "use living_room"},
		{typed: "Fleet", err: "reserved"},
		{typed: "", err: "is empty"},
		{typed: "küche", err: "use only lowercase letters"},
		{typed: "***", err: `"***" is not allowed`},
	} {
		got, err := subject.LightName(tt.typed)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("LightName(%q) = %q, %v; want %q", tt.typed, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, subject.ErrInvalidName)):
			t.Errorf("LightName(%q) = %q, %v; want an error with %q", tt.typed, got, err, tt.err)
		}
	}
}

func TestValidGroup(t *testing.T) {
	tests := []struct {
		name    string
		given   string
		wantErr bool
	}{
		{name: "simple", given: "upstairs"},
		{name: "reserved light names are fine groups", given: "fleet"},
		{name: "empty", given: "", wantErr: true},
		{name: "dot", given: "a.b", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := subject.ValidGroup(tt.given); (err != nil) != tt.wantErr {
				t.Fatalf("ValidGroup(%q) = %v, wantErr %v", tt.given, err, tt.wantErr)
			}
		})
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  string
	}{
		{name: "Cmd", given: subject.Cmd("kitchen", "fire"), want: "lumen.kitchen.cmd.fire"},
		{name: "CmdPrefix", given: subject.CmdPrefix("kitchen"), want: "lumen.kitchen.cmd"},
		{name: "In", given: subject.In("kitchen", "button"), want: "lumen.kitchen.evt.in.button"},
		{name: "Out", given: subject.Out("kitchen", "state"), want: "lumen.kitchen.evt.out.state"},
		{name: "AllIn", given: subject.AllIn("kitchen"), want: "lumen.kitchen.evt.in.>"},
		{name: "AllOut", given: subject.AllOut("kitchen"), want: "lumen.kitchen.evt.out.>"},
		{name: "Events", given: subject.Events("kitchen"), want: "lumen.kitchen.evt.>"},
		{name: "AllEvents", given: subject.AllEvents, want: "lumen.*.evt.>"},
		{name: "FleetCmd", given: subject.FleetCmd("get"), want: "lumen.fleet.cmd.get"},
		{name: "FleetCmdPrefix", given: subject.FleetCmdPrefix(), want: "lumen.fleet.cmd"},
		{name: "GroupCmd", given: subject.GroupCmd("upstairs", "fire"), want: "lumen.group.upstairs.cmd.fire"},
		{name: "GroupCmdPrefix", given: subject.GroupCmdPrefix("upstairs"), want: "lumen.group.upstairs.cmd"},
		{name: "Stream", given: subject.Stream, want: "LUMEN"},
		{name: "SnapshotBucket", given: subject.SnapshotBucket, want: "LUMEN_SNAP"},
		{name: "Service", given: subject.Service, want: "lumen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.given != tt.want {
				t.Fatalf("got %q, want %q", tt.given, tt.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	type want struct {
		light, dir, typ string
		ok              bool
	}
	tests := []struct {
		name  string
		given string
		want  want
	}{
		{name: "input", given: subject.In("kitchen", "button"), want: want{"kitchen", "in", "button", true}},
		{name: "output", given: subject.Out("hall-1", "state"), want: want{"hall-1", "out", "state", true}},
		{name: "multi-token type", given: "lumen.kitchen.evt.in.data.weather", want: want{"kitchen", "in", "data.weather", true}},
		{name: "no direction", given: "lumen.kitchen.evt.restart", want: want{"kitchen", "", "restart", true}},
		{name: "direction without type", given: "lumen.kitchen.evt.in"},
		{name: "no type", given: "lumen.kitchen.evt"},
		{name: "command", given: subject.Cmd("kitchen", "fire")},
		{name: "other root", given: "other.kitchen.evt.in.button"},
		{name: "reserved light", given: "lumen.fleet.evt.in.button"},
		{name: "invalid light", given: "lumen.Kitchen.evt.in.button"},
		{name: "wildcard", given: subject.AllIn("kitchen")},
		{name: "star light", given: "lumen.*.evt.in.button"},
		{name: "empty token", given: "lumen.kitchen.evt.in..x"},
		{name: "trailing dot", given: "lumen.kitchen.evt.in.button."},
		{name: "empty", given: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			light, dir, typ, ok := subject.Parse(tt.given)
			got := want{light, dir, typ, ok}
			if got != tt.want {
				t.Fatalf("Parse(%q) = %+v, want %+v", tt.given, got, tt.want)
			}
		})
	}
}

func ExampleIn() {
	fmt.Println(subject.In("kitchen", "button"))
	light, dir, typ, ok := subject.Parse("lumen.kitchen.evt.out.state")
	fmt.Println(light, dir, typ, ok)
	// Output:
	// lumen.kitchen.evt.in.button
	// kitchen out state true
}

// The house's directory and its everyday verbs share lumen.sys.house.>,
// which a Pi's account routes to the hub under its prefix; the two
// parses never take each other's subject, not even for a light named
// lights.
func TestPiHouseParses(t *testing.T) {
	const pre = "lumen.sys.pi.kitchenpi.house"
	if got := subject.HouseLights(); got != "lumen.sys.house.lights" {
		t.Errorf("HouseLights = %s", got)
	}
	tests := []struct {
		subj        string
		lights, cmd bool
		light, verb string
	}{
		{subj: pre + ".lights", lights: true},
		{subj: pre + ".lights.cmd.fire", cmd: true, light: "lights", verb: "fire"},
		{subj: pre + ".hall.cmd.set_state", cmd: true, light: "hall", verb: "set_state"},
		{subj: pre + ".lights.x"},
		{subj: pre + ".other"},
		{subj: "lumen.sys.pi..house.lights"},
		{subj: "lumen.sys.house.lights"},
	}
	for _, tc := range tests {
		pi, ok := subject.ParsePiHouseLights(tc.subj)
		if ok != tc.lights || (ok && pi != "kitchenpi") {
			t.Errorf("ParsePiHouseLights(%s) = %q, %v", tc.subj, pi, ok)
		}
		_, light, verb, ok := subject.ParsePiHouse(tc.subj)
		if ok != tc.cmd || light != tc.light || verb != tc.verb {
			t.Errorf("ParsePiHouse(%s) = %q %q %v", tc.subj, light, verb, ok)
		}
	}
}
