package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/lumen-home/lumen/plugins"
)

// Web configures the built-ins that read web services: get_weather
// (Open-Meteo's forecast and geocoding APIs, keyless) and web_search (a
// search endpoint the operator runs or trusts, such as SearXNG's JSON API).
// Their requests go through the built-in's fetcher like fetch_json's.
type Web struct {
	// Home is where "auto" is: the operator's latitude and longitude.
	Home *Home
	// WeatherURL and GeocodingURL are the forecast and geocoding
	// endpoints (defaults DefaultWeatherURL, DefaultGeocodingURL).
	WeatherURL   string
	GeocodingURL string
	// Units of temp, high and low: imperial (°F, the default) or metric.
	Units string
	// SearchURL is the search endpoint; empty: web_search says how to
	// set one.
	SearchURL string
}

// Home is a place on Earth.
type Home struct {
	Lat float64 `yaml:"lat" json:"lat"`
	Lon float64 `yaml:"lon" json:"lon"`
}

// Defaults of Web.
const (
	DefaultWeatherURL   = "https://api.open-meteo.com/v1/forecast"
	DefaultGeocodingURL = "https://geocoding-api.open-meteo.com/v1/search"
	UnitsImperial       = "imperial"
	UnitsMetric         = "metric"
)

const (
	builtinGetWeather = "get_weather"
	builtinWebSearch  = "web_search"
)

// Conditions are the words get_weather's condition takes.
var Conditions = []string{"clear", "cloudy", "fog", "drizzle", "rain", "snow", "storm"}

// condition names a WMO weather code (Open-Meteo's weather_code).
func condition(code int) string {
	switch {
	case code <= 1:
		return "clear"
	case code <= 3:
		return "cloudy"
	case code == 45 || code == 48:
		return "fog"
	case code >= 51 && code <= 57:
		return "drizzle"
	case code >= 61 && code <= 67, code >= 80 && code <= 82:
		return "rain"
	case code >= 71 && code <= 77, code == 85 || code == 86:
		return "snow"
	case code >= 95:
		return "storm"
	}
	return "cloudy"
}

// weatherResult is what get_weather returns. temp, high and low are in
// the operator's units; the others say theirs.
type weatherResult struct {
	Location        string  `json:"location"`
	Temp            float64 `json:"temp"`
	TempC           float64 `json:"temp_c"`
	TempF           float64 `json:"temp_f"`
	Humidity        float64 `json:"humidity"`
	Condition       string  `json:"condition"`
	WindKmh         float64 `json:"wind_kmh"`
	PrecipitationMm float64 `json:"precipitation_mm"`
	IsDay           bool    `json:"is_day"`
	High            float64 `json:"high"`
	Low             float64 `json:"low"`
	HighC           float64 `json:"high_c"`
	LowC            float64 `json:"low_c"`
	Units           string  `json:"units"`
}

func (b *builtin) getWeather(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Location string `json:"location"`
	}
	if err := decodeArgs(raw, &a); err != nil || strings.TrimSpace(a.Location) == "" {
		if err == nil {
			err = errors.New(`"location" is required`)
		}
		return nil, callErrorf(`%v; give {"location":"Paris"} (a place name) or {"location":"auto"} (the operator's home)`, err)
	}
	place, lat, lon := strings.TrimSpace(a.Location), 0.0, 0.0
	if strings.EqualFold(place, "auto") {
		if b.web.Home == nil {
			return nil, callErrorf(`"auto" means the operator's home, and none is set: the operator gives it with lumen up --home LAT,LON (home: {lat: …, lon: …} in lumen.yaml); or give a place name`)
		}
		place, lat, lon = "home", b.web.Home.Lat, b.web.Home.Lon
	} else {
		var err error
		if place, lat, lon, err = b.geocode(ctx, place); err != nil {
			return nil, err
		}
	}
	q := url.Values{}
	q.Set("latitude", fmt.Sprint(lat))
	q.Set("longitude", fmt.Sprint(lon))
	q.Set("current", "temperature_2m,relative_humidity_2m,weather_code,wind_speed_10m,precipitation,is_day")
	q.Set("daily", "temperature_2m_max,temperature_2m_min")
	q.Set("timezone", "auto")
	q.Set("forecast_days", "1")
	var f struct {
		Current *struct {
			Temp     *float64 `json:"temperature_2m"`
			Humidity float64  `json:"relative_humidity_2m"`
			Code     int      `json:"weather_code"`
			Wind     float64  `json:"wind_speed_10m"`
			Precip   float64  `json:"precipitation"`
			IsDay    int      `json:"is_day"`
		} `json:"current"`
		Daily struct {
			Max []float64 `json:"temperature_2m_max"`
			Min []float64 `json:"temperature_2m_min"`
		} `json:"daily"`
	}
	if err := b.getJSON(ctx, orDefault(b.web.WeatherURL, DefaultWeatherURL), q, &f); err != nil {
		return nil, err
	}
	if f.Current == nil || f.Current.Temp == nil {
		return nil, callErrorf("the weather service's answer has no current temperature")
	}
	c := f.Current
	r := weatherResult{Location: place, TempC: round1(*c.Temp), Humidity: c.Humidity, Condition: condition(c.Code),
		WindKmh: c.Wind, PrecipitationMm: c.Precip, IsDay: c.IsDay == 1, HighC: round1(*c.Temp), LowC: round1(*c.Temp)}
	if len(f.Daily.Max) > 0 && len(f.Daily.Min) > 0 {
		r.HighC, r.LowC = round1(f.Daily.Max[0]), round1(f.Daily.Min[0])
	}
	r.TempF = fahrenheit(r.TempC)
	r.Temp, r.High, r.Low, r.Units = r.TempF, fahrenheit(r.HighC), fahrenheit(r.LowC), UnitsImperial
	if b.web.Units == UnitsMetric {
		r.Temp, r.High, r.Low, r.Units = r.TempC, r.HighC, r.LowC, UnitsMetric
	}
	return r, nil
}

// geocode finds a place by name: its name as the service spells it, and
// where it is.
func (b *builtin) geocode(ctx context.Context, name string) (string, float64, float64, error) {
	q := url.Values{}
	q.Set("name", name)
	q.Set("count", "1")
	q.Set("format", "json")
	var g struct {
		Results []struct {
			Name    string  `json:"name"`
			Country string  `json:"country"`
			Lat     float64 `json:"latitude"`
			Lon     float64 `json:"longitude"`
		} `json:"results"`
	}
	if err := b.getJSON(ctx, orDefault(b.web.GeocodingURL, DefaultGeocodingURL), q, &g); err != nil {
		return "", 0, 0, err
	}
	if len(g.Results) == 0 {
		return "", 0, 0, callErrorf("no place called %q is known to the geocoding service; give a city, e.g. \"Paris\" or \"Lyon, France\"", name)
	}
	p := g.Results[0]
	full := p.Name
	if p.Country != "" {
		full += ", " + p.Country
	}
	return full, p.Lat, p.Lon, nil
}

// searchResult is what web_search returns.
type searchResult struct {
	Results []searchHit `json:"results"`
}

type searchHit struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// maxHits is how many results web_search returns.
const maxHits = 8

func (b *builtin) webSearch(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Query string `json:"query"`
	}
	if err := decodeArgs(raw, &a); err != nil || strings.TrimSpace(a.Query) == "" {
		if err == nil {
			err = errors.New(`"query" is required`)
		}
		return nil, callErrorf(`%v; give {"query":"…"}`, err)
	}
	if b.web.SearchURL == "" {
		return nil, callErrorf("no search endpoint is set: the operator gives one with lumen up --search-url URL (search_url: in lumen.yaml), e.g. a SearXNG instance's https://searx.example/search with its JSON format enabled")
	}
	q := url.Values{}
	q.Set("q", a.Query)
	q.Set("format", "json")
	var s struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := b.getJSON(ctx, b.web.SearchURL, q, &s); err != nil {
		return nil, err
	}
	out := searchResult{Results: []searchHit{}}
	for _, r := range s.Results[:min(len(s.Results), maxHits)] {
		out.Results = append(out.Results, searchHit{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return out, nil
}

// getJSON GETs base with the query q through the built-in's fetcher and
// decodes the JSON answer into v.
func (b *builtin) getJSON(ctx context.Context, base string, q url.Values, v any) error {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("tool: %s: the endpoint %q is not a URL: %w", b.name, base, err)
	}
	qs := u.Query()
	for k, vs := range q {
		qs[k] = vs
	}
	u.RawQuery = qs.Encode()
	resp, err := b.fetch.Fetch(ctx, plugins.FetchRequest{URL: u.String(), Method: "GET", Headers: map[string]string{"Accept": "application/json"}})
	if err != nil {
		if ctx.Err() != nil {
			return callErrorf("%s did not answer within %v; try again later", origin(base), plugins.DefaultTimeout)
		}
		return callErrorf("%v", err)
	}
	if resp.Status < 200 || resp.Status > 299 {
		return callErrorf("%s answered %d: %s", origin(base), resp.Status, excerpt(resp.Body))
	}
	if err := json.Unmarshal([]byte(resp.Body), v); err != nil {
		return callErrorf("the answer of %s is not the JSON expected: %s", origin(base), excerpt(resp.Body))
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func fahrenheit(c float64) float64 { return round1(c*9/5 + 32) }

func round1(x float64) float64 { return math.Round(x*10) / 10 }
