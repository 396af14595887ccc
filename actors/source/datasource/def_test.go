package datasource_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

// The seed's two createDataSource bodies (seed 000 §4 and §5).
const (
	seedWeather = `{
        "name": "weather",
        "interval_ms": 3600000,
        "fetch": {"tool": "get_weather", "args": {"location": "auto"}},
        "store": {"temperature": "result.temp"},
        "fires": "weather_updated"
    }`
	seedBitcoin = `{
        "name": "bitcoin",
        "interval_ms": 60000,
        "fetch": {"tool": "get_bitcoin_price", "args": {}},
        "store": {"btc_price": "result.price"},
        "fires": "bitcoin_updated"
    }`
)

func intp(n int) *int { return &n }

func TestDecode(t *testing.T) {
	tests := []struct {
		name  string
		given string
		opts  []datasource.Option
		want  datasource.Def
	}{
		{
			name:  "seed weather",
			given: seedWeather,
			want: datasource.Def{Name: "weather", Type: "poll", IntervalMs: 3600000,
				Fetch: datasource.Fetch{Tool: "get_weather", Args: json.RawMessage(`{"location":"auto"}`)},
				Store: map[string]string{"temperature": "result.temp"}, Fires: "weather_updated"},
		},
		{
			name:  "seed bitcoin, with the tool known",
			given: seedBitcoin,
			opts:  []datasource.Option{datasource.WithTools("fetch_json", "get_bitcoin_price")},
			want: datasource.Def{Name: "bitcoin", Type: "poll", IntervalMs: 60000,
				Fetch: datasource.Fetch{Tool: "get_bitcoin_price", Args: json.RawMessage(`{}`)},
				Store: map[string]string{"btc_price": "result.price"}, Fires: "bitcoin_updated"},
		},
		{
			name:  "fetch without args gets {}",
			given: `{"name":"w","interval_ms":10000,"fetch":{"tool":"fetch_json"},"store":{"t":"result"}}`,
			want: datasource.Def{Name: "w", Type: "poll", IntervalMs: 10000,
				Fetch: datasource.Fetch{Tool: "fetch_json", Args: json.RawMessage(`{}`)}, Store: map[string]string{"t": "result"}},
		},
		{
			name:  "a short interval with the test override",
			given: `{"name":"w","interval_ms":50,"fetch":{"tool":"fetch_json","args":null},"store":{"t":"result"}}`,
			opts:  []datasource.Option{datasource.WithMinInterval(10 * time.Millisecond)},
			want: datasource.Def{Name: "w", Type: "poll", IntervalMs: 50,
				Fetch: datasource.Fetch{Tool: "fetch_json", Args: json.RawMessage(`{}`)}, Store: map[string]string{"t": "result"}},
		},
		{
			name:  "seed internal source, tracks from the name",
			given: `{"name":"state_duration","internal":true}`,
			want: datasource.Def{Name: "state_duration", Type: "internal", IntervalMs: 60000, Tracks: "state_duration",
				Store: map[string]string{"state_duration": "result"}},
		},
		{
			name:  "seed internal source with tracks",
			given: `{"name": "activity", "internal": true, "tracks": "transitions_today", "fires": "activity_updated"}`,
			want: datasource.Def{Name: "activity", Type: "internal", IntervalMs: 60000, Tracks: "transitions_today",
				Store: map[string]string{"transitions_today": "result"}, Fires: "activity_updated"},
		},
		{
			name:  "seed time_in_state_ms",
			given: `{"name": "state_duration", "internal": true, "tracks": "time_in_state_ms", "interval_ms": 1000}`,
			want: datasource.Def{Name: "state_duration", Type: "internal", IntervalMs: 1000, Tracks: "time_in_state_ms",
				Store: map[string]string{"time_in_state_ms": "result"}},
		},
		{
			name:  "internal with its own store",
			given: `{"name":"pattern","type":"internal","tracks":"last_5_transitions","store":{"recent":"result"}}`,
			want: datasource.Def{Name: "pattern", Type: "internal", IntervalMs: 60000, Tracks: "last_5_transitions",
				Store: map[string]string{"recent": "result"}},
		},
		{
			name:  "seed webhook alias",
			given: `{"name": "webhook", "type": "http_listener", "fires": "webhook_received"}`,
			want:  datasource.Def{Name: "webhook", Type: "webhook", Fires: "webhook_received"},
		},
		{
			name:  "seed mqtt alias",
			given: `{"name": "mqtt", "type": "mqtt_subscribe", "topic": "home/doorbell", "fires": "doorbell"}`,
			want:  datasource.Def{Name: "mqtt", Type: "mqtt", Topic: "home/doorbell", Fires: "doorbell"},
		},
		{
			name:  "nats",
			given: `{"type":"nats","subject":"home.doorbell","name":"door","fires":"doorbell","store":{"who":"result.visitor"}}`,
			want: datasource.Def{Name: "door", Type: "nats", Subject: "home.doorbell", Fires: "doorbell",
				Store: map[string]string{"who": "result.visitor"}},
		},
		{
			name:  "gpio PIR",
			given: `{"name":"pir","type":"gpio","pin":17,"pull":"down","edge":"rising","fires":"motion"}`,
			want:  datasource.Def{Name: "pir", Type: "gpio", Pin: intp(17), Pull: "down", Edge: "rising", Fires: "motion", DebounceMs: intp(20)},
		},
		{
			name:  "gpio defaults",
			given: `{"name":"pir","type":"gpio","pin":0,"fires":"motion"}`,
			want:  datasource.Def{Name: "pir", Type: "gpio", Pin: intp(0), Pull: "none", Edge: "rising", Fires: "motion", DebounceMs: intp(20)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := datasource.Decode([]byte(tt.given), tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tt.want)
			}
			// JSON round trip.
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			again, err := datasource.Decode(b, tt.opts...)
			if err != nil {
				t.Fatalf("decoding %s: %v", b, err)
			}
			if !reflect.DeepEqual(again, got) {
				t.Fatalf("round trip through %s:\ngot  %#v\nwant %#v", b, again, got)
			}
		})
	}
}

func TestMarshal(t *testing.T) {
	d, err := datasource.Decode([]byte(seedWeather))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	const want = `{"name":"weather","type":"poll","interval_ms":3600000,"fetch":{"tool":"get_weather","args":{"location":"auto"}},"store":{"temperature":"result.temp"},"fires":"weather_updated"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	d, _ = datasource.Decode([]byte(`{"name":"door","type":"nats","subject":"home.doorbell","fires":"doorbell"}`))
	b, _ = json.Marshal(d)
	if want := `{"name":"door","type":"nats","fires":"doorbell","subject":"home.doorbell"}`; string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

// A definition inside another message decodes strictly too, without the
// semantic checks (replay must not depend on today's tools).
func TestUnmarshalNested(t *testing.T) {
	var list struct {
		Sources []datasource.Def `json:"sources"`
	}
	err := json.Unmarshal([]byte(`{"sources":[`+seedBitcoin+`,{"name":"x","interval_ms":5}]}`), &list)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sources) != 2 || list.Sources[0].Name != "bitcoin" || list.Sources[1].IntervalMs != 5 {
		t.Fatalf("got %+v", list.Sources)
	}
	err = json.Unmarshal([]byte(`{"sources":[{"name":"x","intervall_ms":5}]}`), &list)
	if err == nil || err.Error() != `source: unknown field "intervall_ms"; check the spelling against the documented fields` {
		t.Fatalf("got %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	const poll = `"interval_ms":60000,"fetch":{"tool":"fetch_json"}`
	tests := []struct {
		name  string
		given string
		opts  []datasource.Option
		code  int
		want  string
	}{
		{"empty body", ``, nil, 400,
			`the definition is empty; send a JSON object like {"name":"weather","interval_ms":3600000,"fetch":{"tool":"get_weather"},"store":{"temperature":"result.temp"},"fires":"weather_updated"}`},
		{"not JSON", `{"name":`, nil, 400, `malformed JSON: the input ends early`},
		{"trailing data", `{"name":"w"} {}`, nil, 400, `unexpected data after the JSON value; send exactly one JSON object`},
		{"unknown field", `{"name":"w","every":60000}`, nil, 400,
			`unknown field "every"; check the spelling against the documented fields`},
		{"unknown field in fetch", `{"name":"w","fetch":{"tool":"t","params":{}}}`, nil, 400,
			`unknown field "params"; check the spelling against the documented fields`},
		{"wrong type", `{"name":"w","store":["result.temp"]}`, nil, 400,
			`field "store" must be an object, not a JSON array`},
		{"empty name", `{"name":"",` + poll + `,"store":{"t":"result"}}`, nil, 400,
			`name is empty; name the source with lowercase letters a-z, digits 0-9, '_' or '-', e.g. "weather"`},
		{"missing name", `{` + poll + `,"store":{"t":"result"}}`, nil, 400,
			`name is empty; name the source with lowercase letters a-z, digits 0-9, '_' or '-', e.g. "weather"`},
		{"bad name", `{"name":"Weather Feed",` + poll + `,"store":{"t":"result"}}`, nil, 400,
			`name "Weather Feed" is not valid; use 1 to 64 lowercase letters a-z, digits 0-9, '_' or '-', e.g. "weather"`},
		{"unknown type", `{"name":"w","type":"cron"}`, nil, 400,
			`source "w": unknown type "cron"; use one of poll, internal, nats, webhook, mqtt, gpio, transition`},
		{"internal contradicts type", `{"name":"w","type":"nats","internal":true}`, nil, 400,
			`source "w": "internal": true contradicts type "nats"; give only one`},
		{"interval missing", `{"name":"w","fetch":{"tool":"fetch_json"},"store":{"t":"result"}}`, nil, 400,
			`source "w": interval_ms is missing; say how often to run it, in milliseconds (at least 10000)`},
		{"interval below minimum", `{"name":"w","interval_ms":5000,"fetch":{"tool":"fetch_json"},"store":{"t":"result"}}`, nil, 400,
			`source "w": interval_ms 5000 is below the minimum of 10000 (10s); run it less often`},
		{"interval below the test minimum", `{"name":"w","interval_ms":5,"fetch":{"tool":"fetch_json"},"store":{"t":"result"}}`,
			[]datasource.Option{datasource.WithMinInterval(10 * time.Millisecond)}, 400,
			`source "w": interval_ms 5 is below the minimum of 10 (10ms); run it less often`},
		{"internal interval below minimum", `{"name":"a","internal":true,"tracks":"transitions_today","interval_ms":500}`, nil, 400,
			`source "a": interval_ms 500 is below the minimum of 1000 (1s); run it less often`},
		{"interval not an integer", `{"name":"w","interval_ms":1.5}`, nil, 400,
			`source "w": interval_ms must be a whole number of milliseconds from 0 to 604800000 (7 days), got 1.5`},
		{"interval too long", `{"name":"w","interval_ms":604800001}`, nil, 400,
			`source "w": interval_ms must be a whole number of milliseconds from 0 to 604800000 (7 days), got 604800001`},
		{"fetch missing", `{"name":"w","interval_ms":60000,"store":{"t":"result"}}`, nil, 400,
			`source "w": fetch is missing; give {"tool": NAME, "args": {…}}, the tool to run and its arguments`},
		{"tool empty", `{"name":"w","interval_ms":60000,"fetch":{"args":{}},"store":{"t":"result"}}`, nil, 400,
			`source "w": fetch.tool is empty; name the tool to run, e.g. fetch_json`},
		{"tool badly named", `{"name":"w","interval_ms":60000,"fetch":{"tool":"get weather"},"store":{"t":"result"}}`, nil, 400,
			`source "w": fetch.tool "get weather" is not a valid tool name; tools are named with a letter, then letters, digits or '_' (at most 64)`},
		{"unknown tool", seedWeather, []datasource.Option{datasource.WithTools("get_time", "fetch_text", "fetch_json")}, 404,
			`source "weather": unknown tool "get_weather"; define it with define_tool first, or use one of fetch_json, fetch_text, get_time`},
		{"no tools at all", seedWeather, []datasource.Option{datasource.WithTools()}, 404,
			`source "weather": unknown tool "get_weather", and no tool exists yet; define it with define_tool first`},
		{"args not an object", `{"name":"w","interval_ms":60000,"fetch":{"tool":"fetch_json","args":["x"]},"store":{"t":"result"}}`, nil, 400,
			`source "w": fetch.args must be a JSON object, e.g. {"location":"Paris"}`},
		{"neither store nor fires", `{"name":"w",` + poll + `}`, nil, 400,
			`source "w": a poll source needs store (variables to set from the tool's result, e.g. {"temperature":"result.main.temp"}), fires (the transition to fire on each run), or both`},
		{"store empty", `{"name":"w",` + poll + `,"store":{}}`, nil, 400,
			`source "w": a poll source needs store (variables to set from the tool's result, e.g. {"temperature":"result.main.temp"}), fires (the transition to fire on each run), or both`},
		{"store value not a string", `{"name":"w",` + poll + `,"store":{"t":1}}`, nil, 400,
			`source "w": store "t": the path must be a string like "result.temp", not 1`},
		{"bad var name", `{"name":"w",` + poll + `,"store":{"temp-c":"result.temp"}}`, nil, 400,
			`source "w": store variable "temp-c" is not a valid name; start with a letter or '_', then letters, digits or '_' (at most 64)`},
		{"var ending in _prev", `{"name":"w",` + poll + `,"store":{"temperature_prev":"result.temp"}}`, nil, 400,
			`source "w": store variable "temperature_prev" ends in _prev, which is kept automatically; store "temperature" instead`},
		{"path without result", `{"name":"w",` + poll + `,"store":{"t":"main.temp"}}`, nil, 400,
			`source "w": store "t": path "main.temp" does not start with result; write it like result.main.temp`},
		{"path with an empty key", `{"name":"w",` + poll + `,"store":{"t":"result.main..temp"}}`, nil, 400,
			`source "w": store "t": path "result.main..temp": expected a key after '.' at byte 11; write .key, or ["key"] for other characters`},
		{"path with a bad index", `{"name":"w",` + poll + `,"store":{"t":"result.items[first]"}}`, nil, 400,
			`source "w": store "t": path "result.items[first]": [first] is not an index; use [0], [1] … (or [-1] for the last item), or ["key"] for a key at byte 12`},
		{"fires with a space", `{"name":"w",` + poll + `,"store":{"t":"result"},"fires":"weather updated"}`, nil, 400,
			`source "w": fires "weather updated" is not a valid transition name; start with a letter, then letters, digits, '_', '-', '.', ':' or '/' (at most 64), e.g. w_updated`},
		{"fires a wildcard", `{"name":"w",` + poll + `,"store":{"t":"result"},"fires":"*"}`, nil, 400,
			`source "w": fires "*" is not a valid transition name; start with a letter, then letters, digits, '_', '-', '.', ':' or '/' (at most 64), e.g. w_updated`},
		{"fetch on a push source", `{"name":"d","type":"nats","subject":"home.x","fetch":{"tool":"fetch_json"},"fires":"x"}`, nil, 400,
			`source "d": fetch is only for poll and transition sources, and this one is nats; remove it or change type`},
		{"interval on a push source", `{"name":"d","type":"webhook","interval_ms":60000,"fires":"x"}`, nil, 400,
			`source "d": interval_ms is only for poll, internal and transition sources, and this one is webhook; remove it or change type`},
		{"seed webhook port", `{"name": "webhook", "type": "http_listener", "port": 8080, "fires": "webhook_received"}`, nil, 400,
			`source "webhook": port cannot be set per source; webhooks arrive on the daemon's HTTP port (lumen up --http 127.0.0.1:8080), so remove port`},
		{"push source that does nothing", `{"name": "mqtt", "type": "mqtt_subscribe", "topic": "home/doorbell"}`, nil, 400,
			`source "mqtt": a mqtt source needs fires (the transition to fire on each message), store (variables to set from it), or both`},
		{"nats without subject", `{"name":"d","type":"nats","fires":"x"}`, nil, 400,
			`source "d": subject is missing; give the NATS subject to listen on, e.g. home.doorbell`},
		{"nats bad subject", `{"name":"d","type":"nats","subject":"home..bell","fires":"x"}`, nil, 400,
			`source "d": subject "home..bell" is not a valid NATS subject; use dot-separated tokens without spaces, e.g. home.doorbell (a token * matches one token, a final > the rest)`},
		{"nats leading wildcard", `{"name":"d","type":"nats","subject":">","fires":"x"}`, nil, 400,
			`source "d": subject ">" starts with a wildcard, which also matches Lumen's own subjects (lumen.>); start with your own prefix, e.g. home.>`},
		{"nats leading token wildcard", `{"name":"d","type":"nats","subject":"*.doorbell","fires":"x"}`, nil, 400,
			`source "d": subject "*.doorbell" starts with a wildcard, which also matches Lumen's own subjects (lumen.>); start with your own prefix, e.g. home.>`},
		{"nats reserved subject", `{"name":"d","type":"nats","subject":"lumen.kitchen.evt.in.fired","fires":"x"}`, nil, 400,
			`source "d": subject "lumen.kitchen.evt.in.fired" is reserved for Lumen and the NATS server; use your own prefix, e.g. home.doorbell`},
		{"mqtt bad topic", `{"name":"d","type":"mqtt","topic":"home/door.bell","fires":"x"}`, nil, 400,
			`source "d": topic "home/door.bell" is not supported; use '/'-separated levels of letters, digits, '_' or '-', e.g. home/doorbell (a level + matches one level, a final # the rest)`},
		{"mqtt reserved topic", `{"name":"d","type":"mqtt","topic":"$SYS/x","fires":"x"}`, nil, 400,
			`source "d": topic "$SYS/x" is reserved for Lumen and the NATS server, or starts with a wildcard that matches them; use your own prefix, e.g. home/doorbell`},
		{"mqtt leading wildcard", `{"name":"d","type":"mqtt","topic":"#","fires":"x"}`, nil, 400,
			`source "d": topic "#" is reserved for Lumen and the NATS server, or starts with a wildcard that matches them; use your own prefix, e.g. home/doorbell`},
		{"gpio without pin", `{"name":"pir","type":"gpio","fires":"motion"}`, nil, 400,
			`source "pir": pin is missing; give the BCM number of the input pin, e.g. 17`},
		{"gpio pin out of range", `{"name":"pir","type":"gpio","pin":40,"fires":"motion"}`, nil, 400,
			`source "pir": pin 40 is not a GPIO input; use a BCM number from 0 to 27, e.g. 17`},
		{"gpio bad pull", `{"name":"pir","type":"gpio","pin":17,"pull":"high","fires":"motion"}`, nil, 400,
			`source "pir": pull "high" is not a bias; use none, up or down`},
		{"gpio bad edge", `{"name":"pir","type":"gpio","pin":17,"edge":"up","fires":"motion"}`, nil, 400,
			`source "pir": edge "up" is not an edge; use rising, falling or both`},
		{"gpio debounce too long", `{"name":"pir","type":"gpio","pin":23,"debounce_ms":10001,"fires":"motion"}`, nil, 400,
			`source "pir": debounce_ms must be a whole number of milliseconds from 0 to 10000, got 10001`},
		{"debounce on a nats source", `{"name":"d","type":"nats","subject":"home.x","debounce_ms":5,"fires":"x"}`, nil, 400,
			`source "d": debounce_ms is only for gpio sources, and this one is nats; remove it or change type`},
		{"internal without tracks", `{"name":"activity","internal":true}`, nil, 400,
			`source "activity": tracks is missing; use one of last_5_transitions, state_duration, time_in_state_ms, transitions_today`},
		{"internal unknown tracks", `{"name":"activity","internal":true,"tracks":"clicks"}`, nil, 400,
			`source "activity": unknown tracks "clicks"; use one of last_5_transitions, state_duration, time_in_state_ms, transitions_today`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := datasource.Decode([]byte(tt.given), tt.opts...)
			if err == nil {
				t.Fatal("no error")
			}
			var e *datasource.Error
			if !errors.As(err, &e) {
				t.Fatalf("%T %v is not a *datasource.Error", err, err)
			}
			if e.Code != tt.code || e.Msg != tt.want {
				t.Fatalf("got  %d %s\nwant %d %s", e.Code, e.Msg, tt.code, tt.want)
			}
			if err.Error() != "source: "+tt.want {
				t.Fatalf("Error() = %q", err.Error())
			}
		})
	}
}

func TestErrorIs(t *testing.T) {
	_, err := datasource.Decode([]byte(seedWeather), datasource.WithTools("fetch_json"))
	if !errors.Is(err, datasource.ErrUnknownTool) || errors.Is(err, datasource.ErrInvalid) {
		t.Fatalf("errors.Is: %v", err)
	}
	_, err = datasource.Decode([]byte(`{"name":""}`))
	if !errors.Is(err, datasource.ErrInvalid) {
		t.Fatalf("errors.Is: %v", err)
	}
}

func TestListenSubject(t *testing.T) {
	tests := []struct {
		name  string
		given datasource.Def
		want  string
	}{
		{"nats", datasource.Def{Type: "nats", Subject: "home.doorbell"}, "home.doorbell"},
		{"mqtt", datasource.Def{Type: "mqtt", Topic: "home/doorbell"}, "home.doorbell"},
		{"mqtt wildcards", datasource.Def{Type: "mqtt", Topic: "home/+/motion/#"}, "home.*.motion.>"},
		{"poll", datasource.Def{Type: "poll"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.given.ListenSubject(); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A poll source may only fire, as the seed's own test defines one, or
// only store.
func TestPollThatOnlyFires(t *testing.T) {
	for _, body := range []string{
		`{"name":"test","interval_ms":60000,"fetch":{"tool":"mock_tool"},"fires":"test_updated"}`,
		`{"name":"test","interval_ms":60000,"fetch":{"tool":"mock_tool"},"store":{},"fires":"test_updated"}`,
	} {
		d, err := datasource.Decode([]byte(body), datasource.WithTools("mock_tool"))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if d.Kind() != datasource.TypePoll || d.Fires != "test_updated" || len(d.Store) != 0 {
			t.Fatalf("%s: decoded %+v", body, d)
		}
		vals, err := datasource.Values(d, json.RawMessage(`{"anything":1}`))
		if err != nil || len(vals) != 0 {
			t.Fatalf("a run stores %v, %v; want nothing", vals, err)
		}
	}
}

// A definition built in Go is checked the same way.
func TestValidate(t *testing.T) {
	d := datasource.Def{Name: "w", IntervalMs: 60000, Fetch: datasource.Fetch{Tool: "fetch_json"}, Store: map[string]string{"t": "result.temp"}}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.Kind() != "poll" || !d.Polled() || d.Interval() != time.Minute {
		t.Fatalf("kind %s polled %v interval %v", d.Kind(), d.Polled(), d.Interval())
	}
	d.IntervalMs = 8 * 24 * 3600 * 1000
	if err := d.Validate(); err == nil || err.Error() != `source: source "w": interval_ms 691200000 is above the maximum of 604800000 (7 days)` {
		t.Fatalf("got %v", err)
	}
}
