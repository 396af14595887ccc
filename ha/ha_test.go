package ha

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/color"
)

// The discovery payload, field by field, as Home Assistant's MQTT docs
// define device-based discovery, the light (schema json), event and
// device trigger platforms.
func TestDiscovery(t *testing.T) {
	topic, payload, err := Discovery(DefaultPrefix, Light{Name: "kitchen", Room: "kitchen", States: []string{"off", "red", "party", "color", "red"},
		Page: "http://pi.local:8642/", Node: "pia", Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	if topic != "homeassistant/device/lumen_kitchen/config" {
		t.Errorf("topic %s", topic)
	}
	var got map[string]any
	if err := json.Unmarshal(payload, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"device": map[string]any{"identifiers": []any{"lumen_kitchen"}, "name": "kitchen", "manufacturer": "Lumen", "model": "Lumen light",
			"sw_version": "1.2.3", "configuration_url": "http://pi.local:8642/", "suggested_area": "kitchen"},
		"origin":       map[string]any{"name": "lumen", "sw_version": "1.2.3", "support_url": "https://github.com/lumen-home/lumen"},
		"availability": []any{map[string]any{"topic": "lumen/node/pia/availability"}},
		"components": map[string]any{
			"light": map[string]any{"platform": "light", "unique_id": "lumen_kitchen_light", "name": nil, "schema": "json",
				"command_topic": "lumen/kitchen/set", "state_topic": "lumen/kitchen/state", "brightness": true,
				"supported_color_modes": []any{"rgb", "color_temp"}, "color_temp_kelvin": true, "min_kelvin": 1000.0, "max_kelvin": 12000.0,
				"effect": true, "effect_list": []any{"party", "red"}, "qos": 1.0},
			"button": map[string]any{"platform": "event", "unique_id": "lumen_kitchen_button", "name": "Button", "device_class": "button",
				"state_topic": "lumen/kitchen/event", "event_types": []any{"click", "double_click", "hold"}},
			"click": map[string]any{"platform": "device_automation", "automation_type": "trigger", "type": "button_short_press",
				"subtype": "button_1", "topic": "lumen/kitchen/button", "payload": "click"},
			"double_click": map[string]any{"platform": "device_automation", "automation_type": "trigger", "type": "button_double_press",
				"subtype": "button_1", "topic": "lumen/kitchen/button", "payload": "double_click"},
			"hold": map[string]any{"platform": "device_automation", "automation_type": "trigger", "type": "button_long_press",
				"subtype": "button_1", "topic": "lumen/kitchen/button", "payload": "hold"},
		},
	}
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s:\n got %v\nwant %v", k, got[k], want[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected key %s", k)
		}
	}
	// No page, no room: no configuration_url, no suggested_area.
	_, payload, _ = Discovery("ha", Light{Name: "hall", Node: "n", Version: "dev"})
	if strings.Contains(string(payload), "configuration_url") || strings.Contains(string(payload), "suggested_area") {
		t.Errorf("empty page or room announced: %s", payload)
	}
	for _, bad := range []Light{{Name: "a/b", Node: "n"}, {Name: "x", Node: "#"}, {Name: "", Node: "n"}} {
		if _, _, err := Discovery("ha", bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestCommand(t *testing.T) {
	i := func(v int) *int { return &v }
	f := func(v bool) *bool { return &v }
	for _, tc := range []struct {
		payload string
		want    []Call
		err     string
	}{
		{`{"state":"ON"}`, []Call{{"power", messages.PowerRequest{On: f(true)}}}, ""},
		{`{"state":"OFF","transition":2}`, []Call{{"power", messages.PowerRequest{On: f(false), FadeMs: i(2000)}}}, ""},
		{`{"state":"ON","brightness":128}`, []Call{{"set_brightness", messages.BrightnessRequest{Percent: i(50)}}}, ""},
		{`{"state":"ON","brightness":1}`, []Call{{"set_brightness", messages.BrightnessRequest{Percent: i(1)}}}, ""},
		{`{"state":"ON","brightness":0}`, []Call{{"power", messages.PowerRequest{On: f(false)}}}, ""},
		{`{"state":"ON","color":{"r":255,"g":128,"b":0}}`, []Call{{"set_color", messages.ColorRequest{R: i(255), G: i(128), B: i(0)}}}, ""},
		{`{"state":"ON","color":{"r":255,"g":128,"b":0},"brightness":255,"transition":0.5}`, []Call{
			{"set_color", messages.ColorRequest{R: i(255), G: i(128), B: i(0), FadeMs: i(500)}},
			{"set_brightness", messages.BrightnessRequest{Percent: i(100), FadeMs: i(500)}}}, ""},
		{`{"state":"ON","color_temp":2700}`, []Call{{"set_color", messages.ColorRequest{Kelvin: i(2700)}}}, ""},
		{`{"state":"ON","effect":"party"}`, []Call{{"set_state", messages.SetStateRequest{Name: "party"}}}, ""},
		{`{"effect":"party","transition":3}`, []Call{{"set_state", messages.SetStateRequest{Name: "party", FadeMs: i(3000)}}}, ""},
		{`{"state":"ON","flash":"short"}`, []Call{{"power", messages.PowerRequest{On: f(true)}}}, ""},
		{`not json`, nil, "not JSON"},
		{`{"state":"MAYBE"}`, nil, "neither ON nor OFF"},
		{`{"brightness":300}`, nil, "0 to 255"},
		{`{"color":{"r":1,"g":2}}`, nil, "r, g and b"},
		{`{"color":{"r":1,"g":2,"b":256}}`, nil, "0 to 255"},
		{`{"color_temp":500}`, nil, "1000 to 12000"},
		{`{"transition":-1}`, nil, "transition"},
		{`{"effect":""}`, nil, "empty effect"},
		{`{"effect":"party","color_temp":3000}`, nil, "one of"},
	} {
		got, err := Command([]byte(tc.payload))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.payload, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.payload, err)
			continue
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(tc.want)
		if string(gb) != string(wb) {
			t.Errorf("%s:\n got %s\nwant %s", tc.payload, gb, wb)
		}
	}
}

func TestStateOf(t *testing.T) {
	states := []messages.State{{Name: "off"}, {Name: "red", R: messages.Channel{Num: 255}},
		{Name: "party", R: messages.Channel{Expr: "t%255"}}, {Name: "color", R: messages.Channel{Num: 10}, G: messages.Channel{Num: 20}, B: messages.Channel{Num: 30}}}
	warm := func(k int) []messages.State {
		c, err := color.Kelvin(k)
		if err != nil {
			t.Fatal(err)
		}
		return []messages.State{{Name: "color", R: messages.Channel{Num: float64(c.R)}, G: messages.Channel{Num: float64(c.G)}, B: messages.Channel{Num: float64(c.B)}}}
	}
	for _, tc := range []struct {
		g      messages.GetReply
		kelvin int
		want   string
	}{
		{messages.GetReply{State: "off", Brightness: 40, States: states}, 0, `{"state":"OFF","color":null,"effect":null}`},
		{messages.GetReply{State: "red", Brightness: 100, States: states}, 0, `{"state":"ON","brightness":255,"color_mode":"rgb","color":{"r":255,"g":0,"b":0},"effect":"red"}`},
		{messages.GetReply{State: "party", Brightness: 50, States: states}, 0, `{"state":"ON","brightness":128,"color_mode":"rgb","color":null,"effect":"party"}`},
		{messages.GetReply{State: "color", Brightness: 1, States: states}, 0, `{"state":"ON","brightness":3,"color_mode":"rgb","color":{"r":10,"g":20,"b":30},"effect":null}`},
		// A color temperature's color: the one asked for, a round
		// hundred, or none (a color that only looks warm).
		{messages.GetReply{State: "color", Brightness: 100, States: warm(2732)}, 2732, `{"state":"ON","brightness":255,"color_mode":"color_temp","color":null,"color_temp":2732,"effect":null}`},
		{messages.GetReply{State: "color", Brightness: 100, States: warm(2700)}, 0, `{"state":"ON","brightness":255,"color_mode":"color_temp","color":null,"color_temp":2700,"effect":null}`},
		{messages.GetReply{State: "color", Brightness: 100, States: warm(2700)}, 5000, `{"state":"ON","brightness":255,"color_mode":"color_temp","color":null,"color_temp":2700,"effect":null}`},
		// White is 6600 K's color: a temperature only when asked as one.
		{messages.GetReply{State: "color", Brightness: 100, States: warm(6600)}, 0, `{"state":"ON","brightness":255,"color_mode":"rgb","color":{"r":255,"g":255,"b":255},"effect":null}`},
		{messages.GetReply{State: "color", Brightness: 100, States: warm(6600)}, 6600, `{"state":"ON","brightness":255,"color_mode":"color_temp","color":null,"color_temp":6600,"effect":null}`},
		{messages.GetReply{State: "color", Brightness: 100, States: []messages.State{{Name: "color", R: messages.Channel{Num: 255}, G: messages.Channel{Num: 160}, B: messages.Channel{Num: 41}}}}, 0,
			`{"state":"ON","brightness":255,"color_mode":"rgb","color":{"r":255,"g":160,"b":41},"effect":null}`},
	} {
		if got := string(StateOf(tc.g, tc.kelvin).Payload()); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.g.State, got, tc.want)
		}
	}
}

func TestBrightnessRoundTrip(t *testing.T) {
	for p := 1; p <= 100; p++ {
		if got := Percent(float64(Brightness(p))); got != p {
			t.Errorf("%d%% → %d → %d%%", p, Brightness(p), got)
		}
	}
}

// At a hub a light is available when the hub and its Pi both are.
func TestDiscoveryAtAHub(t *testing.T) {
	_, payload, err := Discovery(DefaultPrefix, Light{Name: "porch", Node: "lumen-hub", Nodes: []string{"pib"}, Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Availability     []map[string]string `json:"availability"`
		AvailabilityMode string              `json:"availability_mode"`
	}
	if err := json.Unmarshal(payload, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Availability) != 2 || got.Availability[0]["topic"] != "lumen/node/lumen-hub/availability" ||
		got.Availability[1]["topic"] != "lumen/node/pib/availability" || got.AvailabilityMode != "all" {
		t.Errorf("availability at a hub: %s", payload)
	}
	if _, _, err := Discovery(DefaultPrefix, Light{Name: "porch", Node: "h", Nodes: []string{"a/b"}}); err == nil {
		t.Error("a node that cannot be a topic level was taken")
	}
}

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		tls  bool
		err  string
		kind string
	}{
		{false, "not Authorized", "credentials"},
		{false, "bad user name or password", "credentials"},
		{true, "tls: failed to verify certificate: x509: certificate signed by unknown authority", "tls"},
		{true, "read tcp 127.0.0.1:1->127.0.0.1:8883: read: connection reset by peer", "tls"},
		{true, "dial tcp 127.0.0.1:8883: connect: connection refused", "away"},
		{false, "read tcp 127.0.0.1:1->127.0.0.1:1883: read: connection reset by peer", "away"},
		{false, "dial tcp: lookup nowhere: no such host", "away"},
	} {
		if got := Explain("h:1", tc.tls, errors.New(tc.err)); got.Kind != tc.kind || !strings.Contains(got.Sentence, "h:1") {
			t.Errorf("%v %q: %+v, want %s", tc.tls, tc.err, got, tc.kind)
		}
	}
}
