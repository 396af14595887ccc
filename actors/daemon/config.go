package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/plugins/netpolicy"
	"github.com/lumen-home/lumen/web"
)

// Config is the daemon's configuration: the keys of lumen.yaml (and of
// lumen up's flags), then what the program sets. Validate checks it and
// fills the defaults; New does so too.
type Config struct {
	Data     string   `yaml:"-"`
	Listen   string   `yaml:"listen"`
	Lights   []string `yaml:"lights"`
	Sync     string   `yaml:"sync"`
	User     string   `yaml:"user"`
	Password string   `yaml:"password"`
	// MaxBytes is the journal budget; 0 chooses it from the free space
	// at the first start and keeps it in the data directory
	// (broker.ResolveBudget).
	MaxBytes      int64 `yaml:"max_bytes"`
	SnapshotEvery int   `yaml:"snapshot_every"`
	// ClockMode says when timers may trust the system clock (clock.Auto,
	// Trust or Wait).
	ClockMode string `yaml:"clock"`
	// Groups maps a group name to its lights, for lumen.group.<g>.cmd.<verb>.
	Groups map[string][]string `yaml:"groups"`
	// Names are the names people use for the lights, by light: set at
	// each start on the lights whose names differ (set_names, by
	// lumen.yaml).
	Names map[string]LightNames `yaml:"names" doc:"the names people use for each light, as LIGHT: {room: ROOM, aliases: [NAME, …]}: at each start a light whose room or aliases differ gets these (journaled by lumen.yaml), so that 'turn off the bedside' finds it; a key left out keeps what the light has, room: \"\" and aliases: [] clear"`
	// Hardware configures the LED and button (or their simulators).
	Hardware HardwareConfig `yaml:"hardware"`
	// AllowNet lets tools reach these hosts, IPs or CIDRs (with an
	// optional port) even when private, and over plain HTTP.
	AllowNet []string `yaml:"allow_net"`
	// Agent configures the LLM agent.
	Agent AgentConfig `yaml:"agent"`
	// Home is the home's place: where sun schedules are (journaled with
	// each) and get_weather's location "auto" is; WeatherURL and
	// GeocodingURL are its endpoints (default Open-Meteo's),
	// WeatherUnits its units (imperial, the default, or metric);
	// SearchURL is web_search's endpoint (none by default).
	Home         *tool.Home `yaml:"home"`
	WeatherURL   string     `yaml:"weather_url"`
	GeocodingURL string     `yaml:"geocoding_url"`
	WeatherUnits string     `yaml:"weather_units"`
	SearchURL    string     `yaml:"search_url"`
	// HTTP is the daemon's HTTP port: the page, the API and the webhook
	// sources; web.Auto (the default) serves on web.DefaultAddr if it
	// is free, web.Off or empty serves none. MQTT is the embedded server's
	// MQTT listener, off when empty.
	HTTP string `yaml:"http"`
	MQTT string `yaml:"mqtt"`
	// HTTPNames are more host names the page may be reached by, besides
	// IP addresses, localhost and this machine's names (e.g. a name the
	// router's DNS gives it).
	HTTPNames []string `yaml:"http_names"`
	// Hub is the leaf address of a house's hub (tls://HOST:7422), Creds
	// the file 'lumen hub pi add' wrote for this Pi; both or neither.
	Hub   string       `yaml:"hub"`
	Creds string       `yaml:"creds"`
	creds *house.Creds // read by Validate
	// HA connects the lights to Home Assistant through its MQTT broker.
	HA HAConfig `yaml:"ha_mqtt"`

	// Version is Lumen's version, told to Home Assistant.
	Version string `yaml:"-"`

	// Clock is the actors' clock (default clock.System(ClockMode)).
	Clock clock.Clock `yaml:"-"`
	// SourceMinInterval is the shortest interval a data source may have
	// (default datasource.MinPollInterval); only tests lower it.
	SourceMinInterval time.Duration `yaml:"-"`
	// CompileGuest, when set, compiles the tools' guest in another
	// process (plugins.Config.Compile): lumen up runs itself for it.
	CompileGuest func(ctx context.Context, wasmPath, out string) error `yaml:"-"`
	// DiskReserve is the free space below which new inputs are refused
	// (default broker.Reserve of the budget); negative: none, which only
	// tests of the reload after a write error want.
	DiskReserve int64 `yaml:"-"`
	// Logf receives the daemon's log lines (default: none).
	Logf func(format string, args ...any) `yaml:"-"`
	// OnShow, when set, sees the first frame of every state a light's
	// LED shows, raw (before gamma): the terminal's status line. It must
	// not block.
	OnShow func(light, state string, raw []hardware.RGB) `yaml:"-"`
}

// DefaultConfig is the configuration of `lumen up` with no flags and no
// lumen.yaml, for the data directory data.
func DefaultConfig(data string) Config {
	return Config{
		Data: data, Listen: broker.DefaultListen, Lights: []string{"demo"}, Sync: broker.SyncAlways, HTTP: web.Auto,
		ClockMode: clock.Auto, SnapshotEvery: 1000,
		Hardware: HardwareConfig{Driver: "auto"},
		Agent: AgentConfig{MaxTurns: agent.DefaultMaxTurns, Timeout: agent.DefaultCallTimeout,
			TranscribeModel: agent.DefaultTranscribeModel, SpeechModel: agent.DefaultSpeechModel, Voice: agent.DefaultVoice},
	}
}

// Validate checks c and fills its defaults. Its errors name the flag (or
// the lumen.yaml key) to change.
func (c *Config) Validate() error {
	if c.Data == "" {
		return errors.New("--data is empty: give the directory of the journal, the snapshots and lumen.yaml")
	}
	if c.Listen == "" {
		c.Listen = broker.DefaultListen
	}
	if len(c.Lights) == 0 {
		c.Lights = []string{"demo"}
	}
	seen := map[string]bool{}
	for i, typed := range c.Lights {
		l, err := subject.LightName(typed)
		if err != nil {
			return fmt.Errorf("--light: %w", err)
		}
		c.Lights[i] = l
		if seen[l] {
			return fmt.Errorf("--light %q is given twice", l)
		}
		seen[l] = true
	}
	switch c.Sync {
	case "":
		c.Sync = broker.SyncAlways
	case broker.SyncAlways, broker.SyncBatch:
	default:
		return fmt.Errorf("--sync must be always or batch, not %q", c.Sync)
	}
	for g, members := range c.Groups {
		if err := subject.ValidGroup(g); err != nil {
			return fmt.Errorf("group %q: %w", g, err)
		}
		for i, l := range members {
			// A person types a name in any case (LightName).
			l = strings.ToLower(l)
			members[i] = l
			if !seen[l] {
				return fmt.Errorf("group %q names light %q, which is not one of --light %s", g, l, strings.Join(c.Lights, ", "))
			}
		}
	}
	if err := c.validateNames(seen); err != nil {
		return err
	}
	if c.ClockMode == "" {
		c.ClockMode = clock.Auto
	}
	if clock.ParseMode(c.ClockMode) != nil {
		return fmt.Errorf("--clock must be auto, trust or wait, not %q", c.ClockMode)
	}
	switch {
	case c.SnapshotEvery < 0:
		return fmt.Errorf("--snapshot-every %d is negative: give how many inputs a light takes between snapshots (snapshot_every: in lumen.yaml), or 0 for the default, 1000", c.SnapshotEvery)
	case c.SnapshotEvery == 0:
		c.SnapshotEvery = 1000
	}
	switch {
	case c.MaxBytes < 0:
		return fmt.Errorf("--max-bytes %d is negative: give the journal's size budget in bytes (max_bytes: in lumen.yaml), or 0 to choose it from the free space (at most %d, 1 GiB)", c.MaxBytes, broker.DefaultMaxBytes)
	case c.MaxBytes > 0 && c.MaxBytes < minMaxBytes:
		return fmt.Errorf("--max-bytes %d is too small: the journal needs at least %d bytes (max_bytes: in lumen.yaml), or 0 to choose it from the free space", c.MaxBytes, minMaxBytes)
	}
	if err := c.validateHouse(); err != nil {
		return err
	}
	if err := c.Hardware.validate(c.Lights); err != nil {
		return err
	}
	if err := c.validateAccess(); err != nil {
		return err
	}
	if _, err := netpolicy.ParseAllow(c.AllowNet); err != nil {
		return fmt.Errorf("--allow-net: %w", err)
	}
	if err := c.Agent.validate(); err != nil {
		return err
	}
	if err := c.HA.Validate(); err != nil {
		return err
	}
	if err := c.validateWeb(); err != nil {
		return err
	}
	if c.Clock == nil {
		c.Clock = clock.System(c.ClockMode)
	}
	if c.SourceMinInterval <= 0 {
		c.SourceMinInterval = datasource.MinPollInterval
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return nil
}

// validateWeb checks the settings of get_weather and web_search.
func (c *Config) validateWeb() error {
	if h := c.Home; h != nil && (h.Lat < -90 || h.Lat > 90 || h.Lon < -180 || h.Lon > 180) {
		return fmt.Errorf("--home %g,%g: give a latitude from -90 to 90 and a longitude from -180 to 180, e.g. --home 48.85,2.35 (home: {lat: 48.85, lon: 2.35} in lumen.yaml)", h.Lat, h.Lon)
	}
	switch c.WeatherUnits {
	case "", tool.UnitsImperial, tool.UnitsMetric:
	default:
		return fmt.Errorf("--weather-units must be imperial or metric, not %q", c.WeatherUnits)
	}
	for _, u := range []struct{ flag, url string }{{"--weather-url", c.WeatherURL}, {"--geocoding-url", c.GeocodingURL}, {"--search-url", c.SearchURL}} {
		if u.url == "" {
			continue
		}
		if p, err := url.Parse(u.url); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return fmt.Errorf("%s %q: give an http(s) URL, e.g. https://searx.example/search", u.flag, u.url)
		}
	}
	return nil
}

// web is what the tools' built-ins get of the configuration.
func (c *Config) web() tool.Web {
	return tool.Web{Home: c.Home, WeatherURL: c.WeatherURL, GeocodingURL: c.GeocodingURL, Units: c.WeatherUnits, SearchURL: c.SearchURL}
}

// validateAccess checks the credentials and the listeners. It applies the
// broker's rules, but says what to change in the words of lumen up's
// flags and lumen.yaml's keys, before the broker sees them: the broker's
// own checks, which name its Config's fields for its Go callers, stay a
// second line.
func (c *Config) validateAccess() error {
	switch {
	case c.User != "" && c.Password == "":
		return errors.New("--user is given but --password is not: give both (user: and password: in lumen.yaml), or neither")
	case c.User == "" && c.Password != "":
		return errors.New("--password is given but --user is not: give both (user: and password: in lumen.yaml), or neither")
	case c.User != "":
		// The broker keeps some user names for Lumen's own connections;
		// with a data directory and both credentials, its user name is
		// all that it can refuse here.
		if (broker.Config{DataDir: c.Data, User: c.User, Password: c.Password}).Validate() != nil {
			return fmt.Errorf("--user %q is a name Lumen keeps for its own connections: pick another", c.User)
		}
	}
	credentials := c.User != ""
	for _, l := range []struct{ flag, addr, example string }{
		{"--listen", c.Listen, "127.0.0.1:4222"}, {"--http", c.HTTP, "127.0.0.1:8080"}, {"--mqtt", c.MQTT, "127.0.0.1:1883"},
	} {
		if l.addr == "" || l.flag == "--http" && (l.addr == web.Off || l.addr == web.Auto) {
			continue // off, or the loopback default
		}
		if err := checkAddr(l.flag, l.addr, l.example, credentials); err != nil {
			return err
		}
	}
	return nil
}

// checkAddr checks the HOST:PORT of one of lumen up's listeners by the
// broker's rule (broker.CheckAddr): a host beyond this machine needs
// credentials, since anyone on the network could otherwise feed the
// lights.
func checkAddr(flag, addr, example string, credentials bool) error {
	if broker.CheckAddr(flag, addr, true) != nil {
		return fmt.Errorf("%s %q is not HOST:PORT with a port from 0 to 65535: write e.g. %s, or HOST:0 for a free port", flag, addr, example)
	}
	if !credentials && broker.CheckAddr(flag, addr, false) != nil {
		_, port, _ := net.SplitHostPort(addr)
		return fmt.Errorf("%s %s would let other machines in without credentials: set --user and --password (user: and password: in lumen.yaml), or use %s to accept this machine only",
			flag, addr, net.JoinHostPort("127.0.0.1", port))
	}
	return nil
}

// groupsOf returns the groups light is a member of, sorted.
func (c *Config) groupsOf(light string) []string {
	var out []string
	for g, members := range c.Groups {
		for _, l := range members {
			if l == light {
				out = append(out, g)
			}
		}
	}
	slices.Sort(out)
	return out
}

// sourceTick is how often the source managers check their schedules: a
// quarter of the shortest interval, between 10 ms and 1 s.
func (c *Config) sourceTick() time.Duration {
	return min(max(c.SourceMinInterval/4, 10*time.Millisecond), time.Second)
}

// minMaxBytes is the smallest budget --max-bytes may give: the stream's
// share of it must hold a few snapshots' worth of events.
const minMaxBytes = 64 << 10

// compactAbove is the journal size past which lights purge what their
// snapshots cover: 3/4 of the stream's share of the budget, leaving
// room for the events that arrive before the next snapshot.
func compactAbove(budget int64) uint64 {
	return uint64(broker.StreamBytes(budget)) / 4 * 3
}

// forceAbove is the journal size past which a Pi purges what its
// snapshots cover even if the house does not have it yet: 15/16 of the
// stream's share, so that the journal never fills while the hub is away.
func forceAbove(budget int64) uint64 {
	return uint64(broker.StreamBytes(budget)) / 16 * 15
}

// Decode reads a lumen.yaml over c: the keys it has replace c's values,
// but for the keys in keep (dotted paths, e.g. agent.model), which keep
// c's (flags given on the command line win). Unknown keys and values of
// the wrong type are refused.
func (c *Config) Decode(file []byte, keep []string) error {
	var strict Config
	dec := yaml.NewDecoder(bytes.NewReader(file))
	dec.KnownFields(true)
	if err := dec.Decode(&strict); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file
		}
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(file, &doc); err != nil {
		return err
	}
	for _, key := range keep {
		if len(doc.Content) == 1 {
			dropKey(doc.Content[0], strings.Split(key, "."))
		}
	}
	return doc.Decode(c)
}

// dropKey removes the key at path from a YAML mapping.
func dropKey(m *yaml.Node, path []string) {
	for i := 0; m.Kind == yaml.MappingNode && i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != path[0] {
			continue
		}
		if len(path) == 1 {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
		} else {
			dropKey(m.Content[i+1], path[1:])
		}
		return
	}
}

// ParseGroups reads lumen up's --group GROUP=LIGHT,LIGHT flags.
func ParseGroups(flags []string) (map[string][]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string][]string{}
	for _, f := range flags {
		g, members, ok := strings.Cut(f, "=")
		if !ok || g == "" || members == "" {
			return nil, fmt.Errorf("--group %q: write GROUP=LIGHT,LIGHT", f)
		}
		out[g] = append(out[g], strings.Split(members, ",")...)
	}
	return out, nil
}

// DataDir is the data directory of a daemon not told another:
// $XDG_DATA_HOME/lumen, else ~/.local/share/lumen.
func DataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "lumen")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "lumen")
	}
	return "lumen-data"
}

// FlagKeys are lumen up's flags that set a key of lumen.yaml, and that
// key (a dotted path): a flag given on the command line wins over it
// (LoadConfig).
func FlagKeys() map[string]string {
	return map[string]string{"listen": "listen", "light": "lights", "sync": "sync", "user": "user", "password": "password",
		"clock": "clock", "snapshot-every": "snapshot_every", "group": "groups", "max-bytes": "max_bytes", "allow-net": "allow_net",
		"http": "http", "http-name": "http_names", "mqtt": "mqtt", "hub": "hub", "creds": "creds", "hardware": "hardware.driver", "openai-base-url": "agent.base_url", "model": "agent.model",
		"agent-max-turns": "agent.max_turns", "agent-timeout": "agent.timeout", "agent-forbid": "agent.forbid", "agent-stream": "agent.stream",
		"transcribe-model": "agent.transcribe_model", "speech-model": "agent.speech_model", "voice": "agent.voice",
		"home": "home", "weather-url": "weather_url", "geocoding-url": "geocoding_url", "weather-units": "weather_units", "search-url": "search_url",
		"ha-mqtt": "ha_mqtt.url", "ha-user": "ha_mqtt.user", "ha-password": "ha_mqtt.password", "ha-prefix": "ha_mqtt.prefix"}
}

// LoadConfig reads the configuration file under flags, the settings the
// command line gave: file, or lumen.yaml in flags.Data when file is ""
// (then a missing file is no error). The keys in given (FlagKeys' values
// of the flags given) keep flags' values. It does not validate.
func LoadConfig(file string, flags Config, given []string) (Config, error) {
	explicit := file != ""
	if file == "" {
		file = filepath.Join(flags.Data, "lumen.yaml")
	}
	cfg := flags
	b, err := os.ReadFile(file)
	switch {
	case errors.Is(err, os.ErrNotExist) && !explicit:
	case err != nil:
		return cfg, fmt.Errorf("config: %w", err)
	default:
		if err := cfg.Decode(b, given); err != nil {
			return cfg, fmt.Errorf("config %s: %w", file, err)
		}
	}
	return cfg, nil
}
