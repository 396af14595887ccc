package datasource_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  datasource.Path
		canon string
	}{
		{"whole result", "result", nil, "result"},
		{"keys", "result.main.temp", datasource.Path{{Key: "main"}, {Key: "temp"}}, "result.main.temp"},
		{"index", "result.items[0].price", datasource.Path{{Key: "items"}, {Index: 0, IsIndex: true}, {Key: "price"}}, "result.items[0].price"},
		{"last item", "result.items[-1]", datasource.Path{{Key: "items"}, {Index: -1, IsIndex: true}}, "result.items[-1]"},
		{"quoted key", `result["key with space"]`, datasource.Path{{Key: "key with space"}}, `result["key with space"]`},
		{"JSON escapes", `result["a\"b\u00e9"]`, datasource.Path{{Key: `a"bé`}}, `result["a\"bé"]`},
		{"single quotes", `result['it\'s'].x`, datasource.Path{{Key: "it's"}, {Key: "x"}}, `result["it's"].x`},
		{"quoted plain key", `result["temp"]`, datasource.Path{{Key: "temp"}}, "result.temp"},
		{"dash, dollar, digits", "result.temp-f.$v.0", datasource.Path{{Key: "temp-f"}, {Key: "$v"}, {Key: "0"}}, "result.temp-f.$v.0"},
		{"spaces around", "  result.a  ", datasource.Path{{Key: "a"}}, "result.a"},
		{"nested indexes", "result[1][2]", datasource.Path{{Index: 1, IsIndex: true}, {Index: 2, IsIndex: true}}, "result[1][2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := datasource.ParsePath(tt.given)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
			if got.String() != tt.canon {
				t.Fatalf("String() = %s, want %s", got, tt.canon)
			}
			again, err := datasource.ParsePath(got.String())
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("reparse of %s: %#v, %v", got, again, err)
			}
		})
	}
}

func TestParsePathErrors(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  string
	}{
		{"empty", "", `path "" does not start with result; write it like result.main.temp`},
		{"no result", "main.temp", `path "main.temp" does not start with result; write it like result.main.temp`},
		{"results", "results.temp", `path "results.temp" does not start with result; write it like result.main.temp`},
		{"dangling dot", "result.", `path "result.": expected a key after '.' at byte 6; write .key, or ["key"] for other characters`},
		{"space in key", "result.a b", `path "result.a b": unexpected ' ' at byte 8; continue with .key, [N] or ["key"]`},
		{"unclosed bracket", "result.a[0", `path "result.a[0": '[' is not closed at byte 8`},
		{"unclosed quote", `result["a]`, `path "result[\"a]": the quoted key is not closed at byte 6`},
		{"no bracket after quote", `result["a"].b`[:10] + `x]`, `path "result[\"a\"x]": expected ']' after the quoted key at byte 6`},
		{"not an index", "result[one]", `path "result[one]": [one] is not an index; use [0], [1] … (or [-1] for the last item), or ["key"] for a key at byte 6`},
		{"empty index", "result[]", `path "result[]": [] is not an index; use [0], [1] … (or [-1] for the last item), or ["key"] for a key at byte 6`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := datasource.ParsePath(tt.given)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
}

const weatherResult = `{
  "coord": {"lon": 2.35, "lat": 48.85},
  "weather": [{"id": 800, "main": "Clear", "description": "clear sky"}],
  "main": {"temp": 64.4, "feels_like": 63.1, "humidity": 52},
  "name": "Paris",
  "alerts": [],
  "odd keys": {"key with space": true, "nothing": null}
}`

func TestExtract(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  string
	}{
		{"number", "result.main.temp", `64.4`},
		{"string", "result.name", `"Paris"`},
		{"index then key", "result.weather[0].main", `"Clear"`},
		{"last item", "result.weather[-1].id", `800`},
		{"object, compacted", "result.coord", `{"lon":2.35,"lat":48.85}`},
		{"quoted keys", `result["odd keys"]["key with space"]`, `true`},
		{"null is a value here", `result["odd keys"].nothing`, `null`},
		{"whole result", "result", `{"coord":{"lon":2.35,"lat":48.85},"weather":[{"id":800,"main":"Clear","description":"clear sky"}],"main":{"temp":64.4,"feels_like":63.1,"humidity":52},"name":"Paris","alerts":[],"odd keys":{"key with space":true,"nothing":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := datasource.Extract([]byte(weatherResult), tt.given)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestExtractErrors(t *testing.T) {
	tests := []struct {
		name   string
		result string
		path   string
		code   int
		want   string
	}{
		{"missing key", weatherResult, "result.main.temperature", 502,
			`result.main has no key "temperature" (it has feels_like, humidity, temp)`},
		{"missing first key", weatherResult, "result.temp", 502,
			`result has no key "temp" (it has alerts, coord, main, name, odd keys, weather)`},
		{"many keys", `{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1}`, "result.z", 502,
			`result has no key "z" (it has a, b, c, d, e, f, g, h and 2 more)`},
		{"empty object", `{}`, "result.price", 502, `result has no key "price" (it is empty)`},
		{"index out of range", weatherResult, "result.weather[3].main", 502,
			`result.weather has 1 item, so [3] is out of range`},
		{"empty array", weatherResult, "result.alerts[-1]", 502,
			`result.alerts has no items, so [-1] is out of range`},
		{"key on an array", weatherResult, "result.weather.main", 502,
			`result.weather is an array, not an object, so result.weather.main cannot be read; index it like result.weather[0]`},
		{"index on an object", weatherResult, "result.main[0]", 502,
			`result.main is an object, not an array, so result.main[0] cannot be read; use .key`},
		{"key on a number", weatherResult, "result.main.temp.value", 502,
			`result.main.temp is a number, not an object, so result.main.temp.value cannot be read`},
		{"through null", weatherResult, `result["odd keys"].nothing.x`, 502,
			`result["odd keys"].nothing is null, not an object, so result["odd keys"].nothing.x cannot be read`},
		{"index on a string", weatherResult, "result.name[0]", 502,
			`result.name is a string, not an array, so result.name[0] cannot be read`},
		{"garbage", `<html>502 Bad Gateway</html>`, "result.price", 502,
			`the result is not valid JSON (invalid character '<' looking for beginning of value), so result.price cannot be read`},
		{"bad path", weatherResult, "main.temp", 400,
			`path "main.temp" does not start with result; write it like result.main.temp`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := datasource.Extract([]byte(tt.result), tt.path)
			var e *datasource.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %s, %v; want an error", got, err)
			}
			if e.Code != tt.code || e.Msg != tt.want {
				t.Fatalf("got  %d %s\nwant %d %s", e.Code, e.Msg, tt.code, tt.want)
			}
		})
	}
}
