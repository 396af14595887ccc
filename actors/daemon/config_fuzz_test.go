package daemon_test

import (
	"testing"

	"github.com/lumen-home/lumen/actors/daemon"
)

// FuzzConfigFile: any lumen.yaml, under any flags, is refused with an
// error or read; then the configuration is checked, never panicking.
func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{
		"listen: 127.0.0.1:4222\nlights: [kitchen, hall]\nsync: batch\nsnapshot_every: 50\n",
		"groups: {down: [kitchen]}\nlights: [kitchen]\nhardware: {driver: sim, pixels: 8, gestures: {hold_ms: 900}}\n",
		"agent: {model: llama3.1, max_turns: 4, timeout: 30s, forbid: [defineTool]}\nhome: {lat: 48.85, lon: 2.35}\nweather_units: metric\n",
		"allow_net: [192.168.1.20, 10.0.0.0/8:443]\nhttp: 127.0.0.1:0\nmqtt: 127.0.0.1:0\nsearch_url: https://searx.example/search\n",
		"hub: tls://hub.local:7422\ncreds: /nonexistent.creds\n", "lisen: 1\n", "max_bytes: -5\n", "lights: kitchen\n", "*a", "",
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, file []byte, keepModel bool) {
		cfg := daemon.DefaultConfig(t.TempDir())
		var keep []string
		if keepModel {
			keep = []string{"agent.model", "listen"}
		}
		if cfg.Decode(file, keep) != nil {
			return
		}
		_ = cfg.Validate()
	})
}
