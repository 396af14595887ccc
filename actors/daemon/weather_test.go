package daemon_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// weatherAPI is a local server shaped like Open-Meteo's forecast and
// geocoding APIs, at temp °F.
func weatherAPI(t *testing.T, temp *atomic.Int64) *httptest.Server {
	t.Helper()
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
	t.Cleanup(api.Close)
	return api
}

// get_weather through the daemon, against the local Open-Meteo: "auto"
// without a home is refused saying how to give one; with one, a place is
// geocoded and its weather told; the README's weather source on a fresh
// light stores the temperature; and the seed's weather example set up by
// the agent. (A light's own get_weather winning over the built-in is
// TestOwnGetWeatherAfterRedefinition.)
func TestGetWeather(t *testing.T) {
	var temp atomic.Int64
	temp.Store(5)
	api := weatherAPI(t, &temp)
	host := strings.TrimPrefix(api.URL, "http://")
	model := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{
			agentScripted("createDataSource", `{"name":"outside","interval_ms":3600000,"fetch":{"tool":"get_weather","args":{"location":"auto"}},"store":{"temperature":"result.temp"},"fires":"weather_updated"}`),
			// New names: re-creating the light's blue and red would wait
			// for approval.
			agentScripted("createState", `{"name":"cold","r":0,"g":0,"b":255}`),
			agentScripted("createState", `{"name":"warm","r":255,"g":0,"b":0}`),
			agentScripted("appendRules", `{"rules":[{"from":"*","on":"weather_updated","to":"cold","condition":"getData('temperature') < 60"},{"from":"*","on":"weather_updated","to":"warm","condition":"getData('temperature') >= 60"}]}`)}},
		agenttest.Step{Content: "Blue when it is below 60 °F, red above."},
	)
	defer model.Close()
	common := func(home *tool.Home) func(*daemon.Config) {
		return func(c *daemon.Config) {
			c.AllowNet, c.WeatherURL, c.GeocodingURL, c.Home = []string{host}, api.URL+"/v1/forecast", api.URL+"/v1/search", home
		}
	}

	bare := connectTo(t, agentStart(t, model, common(nil), "demo"))
	if b, _ := runTool(t, bare, "get_weather", `{"location":"auto"}`); !strings.Contains(string(b), "--home LAT,LON") {
		t.Fatalf("auto without a home: %s", b)
	}

	nc := connectTo(t, agentStart(t, model, common(&tool.Home{Lat: 48.85, Lon: 2.35}), "demo"))
	b, code := runTool(t, nc, "get_weather", `{"location":"Paris"}`)
	var run struct {
		OK     bool `json:"ok"`
		Result struct {
			Location  string  `json:"location"`
			TempF     float64 `json:"temp_f"`
			Condition string  `json:"condition"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &run); err != nil || code != "" || !run.OK || run.Result.Location != "Paris, France" || run.Result.TempF != 41 || run.Result.Condition != "cloudy" {
		t.Fatalf("run_tool get_weather: %v %s %s", err, code, b)
	}
	// The README's example (lumen source add weather --tool get_weather
	// --args '{"location":"Paris"}' --interval 1h --store
	// temperature=result.temp --fires weather_updated).
	mustOK(t, nc, messages.VerbCreateSource, `{"name":"weather","interval_ms":3600000,"fetch":{"tool":"get_weather","args":{"location":"Paris"}},"store":{"temperature":"result.temp"},"fires":"weather_updated"}`)
	lumentest.WaitFor(t, 30*time.Second, "the weather source's first run", func() bool {
		vars, _ := mustOK(t, nc, messages.VerbGet, `{}`)["vars"].(map[string]any)
		return vars["temperature"] == 41.0
	})

	// The seed's example: the agent makes a data source on get_weather.
	if r := mustOK(t, nc, messages.VerbAsk, `{"text":"blue when it's cold outside, red when it's warm"}`); r["status"] != "done" {
		t.Fatalf("ask: %v", r)
	}
	lumentest.WaitFor(t, 30*time.Second, "the light to be cold (blue) at 41 °F", func() bool {
		return mustOK(t, nc, messages.VerbGet, `{}`)["state"] == "cold"
	})
	if err := model.Err(); err != nil {
		t.Fatal(err)
	}
}
