package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/plugins"
)

// PluginsConfig says where the operator's precompiled plugins are and how
// to run them.
type PluginsConfig struct {
	// Dir holds the plugins, one <name>.wasm each (<data>/plugins); a
	// missing directory means none.
	Dir string
	// Engine is what every plugin's Engine starts from: the compile
	// cache (CacheDir) and the limits, the same as the JavaScript
	// guest's. WasmPath, Wasm, Name and Progress are set per plugin.
	Engine plugins.Config
	Logf   func(format string, args ...any)
}

// Plugins are the precompiled WASI plugins found in the plugins directory
// at start-up, shared by every light: each is compiled once (into the
// disk cache, in the background) and run through the same ABI and limits
// as the JavaScript guest. The directory is read once; a plugin added,
// changed or removed is seen at the next start.
type Plugins struct {
	byName map[string]*plugin
}

type plugin struct {
	name, path string
	engine     *plugins.Engine
	told       chan struct{} // closed once its load is logged
}

// pluginCachePrefix keeps plugins' cache entries apart from the
// JavaScript guest's ("guest"): the cache removes a name's entries of
// other keys, so a plugin named guest must not share its name.
const pluginCachePrefix = "plugin-"

// OpenPlugins finds the plugins in cfg.Dir and starts loading each one in
// the background. Files that cannot be plugins (a name that is not a
// valid tool name, or a built-in's) are logged and left out; a plugin
// that fails to load is logged as soon as it does, and its every run
// fails with why. It never fails: lumen runs without the plugins it
// cannot use.
func OpenPlugins(cfg PluginsConfig) *Plugins {
	p := &Plugins{byName: map[string]*plugin{}}
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if cfg.Dir == "" {
		return p
	}
	entries, err := os.ReadDir(cfg.Dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			logf("plugins: reading %s: %v; no plugins run", cfg.Dir, err)
		}
		return p
	}
	for _, ent := range entries {
		file := ent.Name()
		name, ok := strings.CutSuffix(file, ".wasm")
		if !ok || ent.IsDir() {
			continue
		}
		path := filepath.Join(cfg.Dir, file)
		switch {
		case !validToolName(name):
			logf("plugins: %s is ignored: %q is not a valid tool name (a lowercase letter, then at most 63 lowercase letters, digits or underscores); rename the file", path, name)
			continue
		case slices.Contains(BuiltinNames(), name):
			logf("plugins: %s is ignored: %s is a built-in tool; rename the file", path, name)
			continue
		}
		ec := cfg.Engine
		ec.Wasm, ec.WasmPath, ec.Name = nil, path, pluginCachePrefix+name
		ec.CheckCommand = true // a wrong module is told once, at start
		ec.Progress = nil
		eng, told := plugins.Start(ec), make(chan struct{})
		// Told once the load is over: a module can compile, and be cached,
		// and still fail CheckCommand.
		go func() {
			defer close(told)
			<-eng.Ready()
			if err := eng.Err(); err != nil {
				if !errors.Is(err, plugins.ErrClosed) {
					logf("plugins: %s cannot run: %s; fix or remove the file and restart lumen", path, brief(err))
				}
				return
			}
			how := "from the cache"
			if l := eng.Load(); !l.Cached && !l.Precompiled {
				how = fmt.Sprintf("compiled in %.1f s", l.Duration.Seconds())
			}
			logf("plugins: %s is ready as tool %s (%s)", path, name, how)
		}()
		p.byName[name] = &plugin{name: name, path: path, engine: eng, told: told}
	}
	return p
}

// Names lists the plugins, sorted; nil on a nil Plugins.
func (p *Plugins) Names() []string {
	if p == nil {
		return nil
	}
	names := make([]string, 0, len(p.byName))
	for n := range p.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Wait waits until every plugin is loaded or failed to, and that is
// logged, as long as ctx allows (tests, and a start-up that wants to
// know).
func (p *Plugins) Wait(ctx context.Context) error {
	if p == nil {
		return nil
	}
	for _, pl := range p.byName {
		select {
		case <-pl.told:
		case <-ctx.Done():
			return fmt.Errorf("tool: waiting for the plugins: %w", ctx.Err())
		}
	}
	return nil
}

// Close frees the plugins' engines; runs still under way end by their
// deadline first.
func (p *Plugins) Close() {
	if p == nil {
		return
	}
	for _, pl := range p.byName {
		_ = pl.engine.Close()
	}
}

func (p *Plugins) get(name string) *plugin {
	if p == nil {
		return nil
	}
	return p.byName[name]
}

// run runs the plugin with args. The call's code is empty: a plugin is its
// own code.
func (pl *plugin) run(ctx context.Context, args []byte, fetch plugins.Fetcher) (plugins.Result, error) {
	// A plugin still compiling is waited for, but not for ever: less than
	// run_tool's own minute, so that the caller hears why.
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	res, err := pl.engine.Run(ctx, plugins.Request{Params: args, Fetch: fetch})
	var pe *plugins.Error
	if err == nil || errors.As(err, &pe) {
		return res, err
	}
	if lerr := pl.engine.Err(); lerr != nil {
		return res, fmt.Errorf("tool: plugin %s cannot run: %s; fix or remove the file and restart lumen", pl.path, brief(lerr))
	}
	select {
	case <-pl.engine.Ready():
	default:
		return res, fmt.Errorf("tool: plugin %s is still compiling (first start only); try again in a minute: %w", pl.path, err)
	}
	return res, fmt.Errorf("tool: plugin %s: %w", pl.path, err)
}

// brief is a load error on one line: Wasmtime's messages span many
// (the cause's details, a native stack trace) that mean nothing to an
// operator or an LLM reading a reply.
func brief(err error) string {
	s, _, _ := strings.Cut(err.Error(), "Stack backtrace:")
	return clip.Line(s, 400, "…")
}

// validToolName is the rule of custom tools' names (actors/light/machine),
// [a-z][a-z0-9_]{0,63}, which plugins' names follow too.
func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
