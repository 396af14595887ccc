package main_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
)

// get_weather through the daemon, against a local server shaped like
// Open-Meteo (--weather-url, --geocoding-url, --allow-net): the README's
// lumen source add weather example on a fresh light, "auto" with and
// without --home, and the seed's weather example set up by the agent.
func TestGetWeather(t *testing.T) {
	t.Parallel()
	var temp atomic.Int64
	temp.Store(5)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/search":
			fmt.Fprintf(w, `{"results":[{"name":%q,"country":"France","latitude":48.85,"longitude":2.35}]}`, r.URL.Query().Get("name"))
		case "/v1/forecast":
			fmt.Fprintf(w, `{"current":{"temperature_2m":%d,"relative_humidity_2m":70,"weather_code":3,"wind_speed_10m":10,"precipitation":0,"is_day":1},"daily":{"temperature_2m_max":[20],"temperature_2m_min":[2]}}`, temp.Load())
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	host := strings.TrimPrefix(api.URL, "http://")
	model := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{
			{Name: "createDataSource", Args: `{"name":"outside","interval_ms":3600000,"fetch":{"tool":"get_weather","args":{"location":"auto"}},"store":{"temperature":"result.temp"},"fires":"weather_updated"}`},
			// New names: re-creating the light's blue and red would wait
			// for approval.
			{Name: "createState", Args: `{"name":"cold","r":0,"g":0,"b":255}`},
			{Name: "createState", Args: `{"name":"warm","r":255,"g":0,"b":0}`},
			{Name: "appendRules", Args: `{"rules":[{"from":"*","on":"weather_updated","to":"cold","condition":"getData('temperature') < 60"},{"from":"*","on":"weather_updated","to":"warm","condition":"getData('temperature') >= 60"}]}`}}},
		agenttest.Step{Content: "Blue when it is below 60 °F, red above."},
	)
	defer model.Close()
	common := []string{"--allow-net", host, "--weather-url", api.URL + "/v1/forecast", "--geocoding-url", api.URL + "/v1/search",
		"--openai-base-url", model.URL + "/v1", "--model", "scripted"}

	bare := startDaemon(t, t.TempDir(), common...)
	if out, code := runCLI(t, bare.URL, "tool", "run", "get_weather", "--args", `{"location":"auto"}`); code == 0 || !strings.Contains(out, "--home LAT,LON") {
		t.Fatalf("auto without --home: exit %d: %s", code, out)
	}

	// A light that defined its own get_weather (the seed's example did)
	// keeps it: it runs instead of the built-in.
	needGuest(t)
	own := filepath.Join(t.TempDir(), "own.yaml")
	if err := os.WriteFile(own, []byte("name: get_weather\ncode: 'return {temp: 99}'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, bare.URL, "tool", "define", "-f", own); code != 0 {
		t.Fatalf("lumen tool define get_weather: exit %d: %s", code, out)
	}
	if out, code := runCLI(t, bare.URL, "tool", "run", "get_weather", "--args", `{"location":"auto"}`, "--json"); code != 0 || !strings.Contains(out, `"temp": 99`) {
		t.Fatalf("a light's own get_weather: exit %d: %s", code, out)
	}

	d := startDaemon(t, t.TempDir(), append(common, "--home", "48.85,2.35")...)
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

	// The seed's example: the agent makes a data source on get_weather.
	if out, code := runCLI(t, d.URL, "ask", "blue when it's cold outside, red when it's warm"); code != 0 {
		t.Fatalf("lumen ask: exit %d: %s", code, out)
	}
	lumentest.WaitFor(t, 30*time.Second, "the light to be cold (blue) at 41 °F", func() bool {
		out, _ := runCLI(t, d.URL, "state")
		return strings.TrimSpace(out) == "cold"
	})
	if err := model.Err(); err != nil {
		t.Fatal(err)
	}
}
