package main_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// lumen up's weather flags (--weather-url, --geocoding-url, --home,
// --allow-net) reach get_weather, lumen tool run prints its result, and
// the README's lumen source add weather example works verbatim. What
// get_weather does in the daemon is actors/daemon's TestGetWeather.
func TestGetWeatherCLI(t *testing.T) {
	t.Parallel()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/search":
			fmt.Fprintf(w, `{"results":[{"name":%q,"country":"France","latitude":48.85,"longitude":2.35}]}`, r.URL.Query().Get("name"))
		case "/v1/forecast":
			fmt.Fprint(w, `{"current":{"temperature_2m":5,"relative_humidity_2m":70,"weather_code":3,"wind_speed_10m":10,"precipitation":0,"is_day":1},"daily":{"temperature_2m_max":[20],"temperature_2m_min":[2]}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	host := strings.TrimPrefix(api.URL, "http://")
	d := startDaemon(t, t.TempDir(), "--allow-net", host, "--weather-url", api.URL+"/v1/forecast", "--geocoding-url", api.URL+"/v1/search", "--home", "48.85,2.35")
	out, code := runCLI(t, d.URL, "tool", "run", "get_weather", "--args", `{"location":"Paris"}`, "--json")
	if code != 0 || !strings.Contains(out, `"location": "Paris, France"`) || !strings.Contains(out, `"temp_f": 41,`) || !strings.Contains(out, `"condition": "cloudy"`) {
		t.Fatalf("lumen tool run get_weather: exit %d: %s", code, out)
	}
	// The README's example, verbatim.
	if out, code := runCLI(t, d.URL, "source", "add", "weather", "--tool", "get_weather", "--args", `{"location":"Paris"}`,
		"--interval", "1h", "--store", "temperature=result.temp", "--fires", "weather_updated"); code != 0 {
		t.Fatalf("lumen source add weather: exit %d: %s", code, out)
	}
	lumentest.WaitFor(t, 30*time.Second, "the weather source's first run", func() bool {
		out, _ := runCLI(t, d.URL, "vars")
		return strings.Contains(out, "temperature") && strings.Contains(out, "41")
	})
}
