package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/plugins"
)

// The catalog lists every built-in with a description and a JSON schema
// object of its args, and every plugin with how its load went.
func TestCatalog(t *testing.T) {
	b := NewCatalog(nil).Builtins()
	var names []string
	for _, bt := range b {
		names = append(names, bt.Name)
		var schema map[string]any
		if err := json.Unmarshal(bt.Params, &schema); err != nil || schema["type"] != "object" || bt.Description == "" {
			t.Errorf("built-in %s: description %q, params %s (%v)", bt.Name, bt.Description, bt.Params, err)
		}
	}
	if !slices.Equal(names, BuiltinNames()) {
		t.Errorf("built-ins %v, want %v", names, BuiltinNames())
	}
	if p := NewCatalog(nil).Plugins(); len(p) != 0 {
		t.Errorf("plugins of no directory: %v", p)
	}

	dir := t.TempDir()
	buildExample(t, dir, "hello")
	if err := os.WriteFile(filepath.Join(dir, "broken.wasm"), []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := OpenPlugins(PluginsConfig{Dir: dir, Engine: plugins.Config{CacheDir: compileCache(t)}})
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	got := NewCatalog(p).Plugins()
	if len(got) != 2 || got[0].Name != "broken" || got[0].Status != messages.PluginFailed || got[0].Error == "" || strings.Contains(got[0].Error, "\n") ||
		got[1] != (messages.PluginTool{Name: "hello", Status: messages.PluginReady}) {
		t.Fatalf("plugins %+v", got)
	}
}
