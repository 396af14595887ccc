package datasource_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

func mustDecode(t *testing.T, s string) datasource.Def {
	t.Helper()
	d, err := datasource.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type vars = map[string]json.RawMessage

func TestValues(t *testing.T) {
	weather := mustDecode(t, seedWeather)
	bitcoin := mustDecode(t, seedBitcoin)
	multi := mustDecode(t, `{"name":"w","interval_ms":60000,"fetch":{"tool":"fetch_json"},
		"store":{"temperature":"result.main.temp","condition":"result.weather[0].main","humidity":"result.main.humidity"}}`)
	tests := []struct {
		name   string
		def    datasource.Def
		result string
		want   vars
	}{
		{name: "weather", def: weather, result: `{"temp":41,"condition":"Rain"}`, want: vars{"temperature": json.RawMessage(`41`)}},
		{name: "bitcoin", def: bitcoin, result: `{"price":67012.5}`, want: vars{"btc_price": json.RawMessage(`67012.5`)}},
		{
			name: "several variables, values compacted", def: multi,
			result: `{"main": {"temp": 64.4, "humidity": 52}, "weather": [ {"main": "Clear"} ]}`,
			want:   vars{"condition": json.RawMessage(`"Clear"`), "humidity": json.RawMessage(`52`), "temperature": json.RawMessage(`64.4`)},
		},
		{
			name: "an object value", def: mustDecode(t, `{"name":"w","interval_ms":60000,"fetch":{"tool":"fetch_json"},"store":{"main":"result.main"}}`),
			result: `{"main": {"temp": 64.4}}`, want: vars{"main": json.RawMessage(`{"temp":64.4}`)},
		},
		{
			name: "internal source with its default store", def: mustDecode(t, `{"name":"activity","internal":true,"tracks":"transitions_today"}`),
			result: `7`, want: vars{"transitions_today": json.RawMessage(`7`)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := datasource.Values(tt.def, json.RawMessage(tt.result))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %s\nwant %s", show(got), show(tt.want))
			}
		})
	}
}

func show(u vars) string {
	b, _ := json.Marshal(u)
	return string(b)
}

// A result that lacks any stored path changes nothing: the last known
// values stay, and the error names every variable that failed.
func TestValuesErrors(t *testing.T) {
	multi := mustDecode(t, `{"name":"w","interval_ms":60000,"fetch":{"tool":"fetch_json"},
		"store":{"temperature":"result.main.temp","condition":"result.weather[0].main"}}`)
	tests := []struct {
		name   string
		def    datasource.Def
		result string
		want   string
	}{
		{"one path missing", multi, `{"main":{"temp":50},"weather":[]}`,
			`source "w" could not store condition: result.weather has no items, so [0] is out of range; the last values are kept. Fix the store paths or the tool's result`},
		{"both missing", multi, `{"error":"rate limited"}`,
			`source "w" could not store condition: result has no key "weather" (it has error); temperature: result has no key "main" (it has error); the last values are kept. Fix the store paths or the tool's result`},
		{"garbage", mustDecode(t, seedBitcoin), `Internal Server Error`,
			`source "bitcoin" could not store btc_price: the result is not valid JSON (invalid character 'I' looking for beginning of value), so result.price cannot be read; the last values are kept. Fix the store paths or the tool's result`},
		{"null value", mustDecode(t, seedBitcoin), `{"price":null}`,
			`source "bitcoin" could not store btc_price: result.price is null; the last values are kept. Fix the store paths or the tool's result`},
		{"bad path in a definition built in Go", datasource.Def{Name: "g", Store: map[string]string{"x": "price"}}, `{"price":1}`,
			`source "g" could not store x: path "price" does not start with result; write it like result.main.temp; the last values are kept. Fix the store paths or the tool's result`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := datasource.Values(tt.def, json.RawMessage(tt.result))
			if got != nil {
				t.Fatalf("values despite the error: %s", show(got))
			}
			var e *datasource.Error
			if !errors.As(err, &e) || e.Code != datasource.CodeBadResult || e.Msg != tt.want {
				t.Fatalf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
}
