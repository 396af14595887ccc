package service

import (
	"slices"
	"testing"

	"github.com/lumen-home/lumen/actors/light"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
)

// create_source and apply name, in the input they journal, the daemon's
// plugins their sources fetch with, and only those.
func TestTranslateNamesPlugins(t *testing.T) {
	c := checks{minInterval: datasource.MinPollInterval, plugins: []string{"hello", "weather", "unused"}}
	src := func(name, tool string) string {
		return `{"name":"` + name + `","interval_ms":60000,"fetch":{"tool":"` + tool + `"},"store":{"x":"result"}}`
	}
	tests := []struct {
		name, verb, body string
		want             []string
	}{
		{"a source on a plugin", messages.VerbCreateSource, src("a", "hello"), []string{"hello"}},
		{"a source on a built-in", messages.VerbCreateSource, src("a", "fetch_json"), nil},
		{"a source on a defined tool", messages.VerbCreateSource, src("a", "mine"), nil},
		{"an internal source", messages.VerbCreateSource, `{"name":"state_duration","internal":true}`, nil},
		{"apply", messages.VerbApply, `{"confirm_empty":true,"states":[],"rules":[],"sources":[` + src("a", "weather") + `,` + src("b", "hello") + `,` + src("c", "hello") + `,` + src("d", "fetch_text") + `]}`,
			[]string{"hello", "weather"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := translateWith(tt.verb, []byte(tt.body), c)
			if err != nil {
				t.Fatal(err)
			}
			var in messages.InConfigData
			if err := messages.Decode(msg.(*light.Command).Data, &in); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(in.Plugins, tt.want) {
				t.Errorf("plugins %v, want %v", in.Plugins, tt.want)
			}
		})
	}
	// Without a catalog nothing is named: the light refuses the tool.
	msg, err := translate(messages.VerbCreateSource, []byte(src("a", "hello")))
	if err != nil {
		t.Fatal(err)
	}
	var in messages.InConfigData
	if err := messages.Decode(msg.(*light.Command).Data, &in); err != nil || in.Plugins != nil {
		t.Errorf("plugins %v (%v), want none", in.Plugins, err)
	}
}
