package tool

import (
	"encoding/json"
	"strings"

	"github.com/lumen-home/lumen/messages"
)

// Catalog is what the tool manager knows and the light's model does not:
// the built-in tools and the operator's plugins. The light's service
// reads it (service.WithToolCatalog) to answer list_tools with them and to
// let a data source fetch with a plugin.
type Catalog struct {
	plugins *Plugins
}

// NewCatalog returns the catalog of the built-ins and of p (nil: no
// plugins).
func NewCatalog(p *Plugins) *Catalog { return &Catalog{plugins: p} }

// builtinDoc describes a built-in for list_tools (and so for the agent):
// what it does and the JSON schema of its args.
func builtinDoc(name string) (desc, params string) {
	const fetchParams = `{"type":"object","properties":{"url":{"type":"string"},"method":{"type":"string"},"headers":{"type":"object","additionalProperties":{"type":"string"}},"body":{}},"required":["url"],"additionalProperties":false}`
	switch name {
	case builtinFetchJSON:
		return "Fetch a URL and parse its answer as JSON: {status, headers, body}. Reaches the URL's host only, under the network policy; a non-2xx status or a body that is not JSON is an error.", fetchParams
	case builtinFetchText:
		return "Fetch a URL and return its answer as text: {status, headers, body}. Reaches the URL's host only, under the network policy; a non-2xx status is an error.", fetchParams
	case builtinGetTime:
		return "The current time in a time zone (default the daemon's): {iso, unix_ms, tz, zone, utc_offset, dst, date, time, year, month, day, weekday, hour, minute, second}.",
			`{"type":"object","properties":{"tz":{"type":"string","description":"an IANA zone, e.g. Europe/Paris"}},"additionalProperties":false}`
	case builtinGetWeather:
		return "Current weather and today's forecast from Open-Meteo: {location, temp, temp_c, temp_f, humidity, condition, wind_kmh, precipitation_mm, is_day, high, low, high_c, low_c, units}. temp, high and low are in the operator's units (°F unless metric); condition is one of " + strings.Join(Conditions, ", ") + ". location is a place name, or \"auto\" for the operator's home.",
			`{"type":"object","properties":{"location":{"type":"string","description":"a place name such as Paris, or auto"}},"required":["location"],"additionalProperties":false}`
	case builtinWebSearch:
		return "Search the web through the operator's search endpoint: {results: [{title, url, snippet}]} (at most 8).",
			`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`
	}
	return "", `{"type":"object"}`
}

// Builtins lists the built-in tools, in BuiltinNames' order.
func (c *Catalog) Builtins() []messages.BuiltinTool {
	names := BuiltinNames()
	out := make([]messages.BuiltinTool, 0, len(names))
	for _, n := range names {
		desc, params := builtinDoc(n)
		out = append(out, messages.BuiltinTool{Name: n, Description: desc, Params: json.RawMessage(params)})
	}
	return out
}

// Plugins lists the operator's plugins, sorted, each with how its load
// went so far.
func (c *Catalog) Plugins() []messages.PluginTool {
	names := c.plugins.Names()
	out := make([]messages.PluginTool, 0, len(names))
	for _, n := range names {
		out = append(out, c.plugins.get(n).status())
	}
	return out
}

// status says whether the plugin runs, still compiles, or cannot run.
func (pl *plugin) status() messages.PluginTool {
	s := messages.PluginTool{Name: pl.name, Status: messages.PluginLoading}
	select {
	case <-pl.engine.Ready():
	default:
		return s
	}
	if err := pl.engine.Err(); err != nil {
		s.Status, s.Error = messages.PluginFailed, brief(err)
		return s
	}
	s.Status = messages.PluginReady
	return s
}
