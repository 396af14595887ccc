package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/plugins/netpolicy"
)

// openMeteo answers like Open-Meteo's forecast (/v1/forecast) and
// geocoding (/v1/search) APIs, and like SearXNG (/search); it remembers
// the forecast's query.
func openMeteo(t *testing.T) (*httptest.Server, *string) {
	t.Helper()
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/search":
			if r.URL.Query().Get("name") == "Atlantis" {
				fmt.Fprint(w, `{"generationtime_ms":0.1}`)
				return
			}
			fmt.Fprintf(w, `{"results":[{"name":%q,"country":"France","latitude":48.85,"longitude":2.35}]}`, r.URL.Query().Get("name"))
		case "/v1/forecast":
			asked = r.URL.RawQuery
			fmt.Fprint(w, `{"current":{"temperature_2m":12.3,"relative_humidity_2m":81,"weather_code":61,"wind_speed_10m":14.4,"precipitation":0.6,"is_day":1},
				"daily":{"temperature_2m_max":[15.04],"temperature_2m_min":[7.6]}}`)
		case "/garbage":
			fmt.Fprint(w, `<html>`)
		case "/search":
			fmt.Fprintf(w, `{"results":[{"title":"Lumen","url":"https://example.com/lumen","content":"a light about %s"},{"title":"Two","url":"https://example.com/2","content":"b"}]}`, r.URL.Query().Get("q"))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

func TestGetWeatherAndSearch(t *testing.T) {
	srv, asked := openMeteo(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	web := Web{WeatherURL: srv.URL + "/v1/forecast", GeocodingURL: srv.URL + "/v1/search"}
	home := web
	home.Home = &Home{Lat: 45.76, Lon: 4.84}
	metric := web
	metric.Units = UnitsMetric
	search := web
	search.SearchURL = srv.URL + "/search"
	garbage := web
	garbage.WeatherURL = srv.URL + "/garbage"
	tests := []struct {
		name, tool string
		web        Web
		args       string
		want       string // in the result, or the error
		query      string // in the forecast's query
	}{
		{"a place", builtinGetWeather, web, `{"location":"Paris"}`,
			`{"location":"Paris, France","temp":54.1,"temp_c":12.3,"temp_f":54.1,"humidity":81,"condition":"rain","wind_kmh":14.4,"precipitation_mm":0.6,"is_day":true,"high":59,"low":45.7,"high_c":15,"low_c":7.6,"units":"imperial"}`,
			"latitude=48.85&longitude=2.35"},
		{"metric", builtinGetWeather, metric, `{"location":"Paris"}`, `"temp":12.3,"temp_c":12.3,"temp_f":54.1`, ""},
		{"auto is home", builtinGetWeather, home, `{"location":"auto"}`, `"location":"home"`, "latitude=45.76&longitude=4.84"},
		{"auto without a home", builtinGetWeather, web, `{"location":"auto"}`, "lumen up --home LAT,LON", ""},
		{"an unknown place", builtinGetWeather, web, `{"location":"Atlantis"}`, `no place called "Atlantis"`, ""},
		{"no location", builtinGetWeather, web, `{}`, `"location" is required`, ""},
		{"a misspelt field", builtinGetWeather, web, `{"city":"Paris"}`, `unknown field "city"`, ""},
		{"a garbage answer", builtinGetWeather, garbage, `{"location":"Paris"}`, "is not the JSON expected: <html>", ""},
		{"search", builtinWebSearch, search, `{"query":"ambient light"}`,
			`{"results":[{"title":"Lumen","url":"https://example.com/lumen","snippet":"a light about ambient light"},{"title":"Two","url":"https://example.com/2","snippet":"b"}]}`, ""},
		{"search without an endpoint", builtinWebSearch, web, `{"query":"x"}`, "lumen up --search-url URL", ""},
		{"search without a query", builtinWebSearch, search, `{"query":" "}`, `"query" is required`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newFetchBuiltin(t, tt.tool, mustAllow(t, host), nil, netpolicy.Limits{})
			b.web = tt.web
			res, err := b.run(context.Background(), json.RawMessage(tt.args))
			got := string(res.Value)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("got %s, want %s in it", got, tt.want)
			}
			if tt.query != "" && !strings.Contains(*asked, tt.query) {
				t.Fatalf("the forecast was asked %q, want %q in it", *asked, tt.query)
			}
		})
	}
	// Under the network policy like fetch_json: a local endpoint needs
	// --allow-net.
	b := newFetchBuiltin(t, builtinGetWeather, mustAllow(t), nil, netpolicy.Limits{})
	b.web = web
	if _, err := b.run(context.Background(), json.RawMessage(`{"location":"Paris"}`)); err == nil || !strings.Contains(err.Error(), "plain http://") {
		t.Fatalf("a local endpoint without --allow-net: %v", err)
	}
}

func TestCondition(t *testing.T) {
	for code, want := range map[int]string{0: "clear", 1: "clear", 2: "cloudy", 3: "cloudy", 45: "fog", 48: "fog", 51: "drizzle", 57: "drizzle",
		61: "rain", 67: "rain", 80: "rain", 82: "rain", 71: "snow", 77: "snow", 85: "snow", 86: "snow", 95: "storm", 99: "storm"} {
		if got := condition(code); got != want {
			t.Errorf("condition(%d) = %s, want %s", code, got, want)
		}
	}
}
