package machine_test

import (
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

// A source may fetch with a plugin only when its input names the plugin
// (the service does, from the daemon's plugins directory): the machine
// never knows the directory, so replay accepts exactly what was accepted.
func TestSourcesOnPlugins(t *testing.T) {
	const (
		src   = `{"name":"greet","interval_ms":60000,"fetch":{"tool":"hello","args":{}},"store":{"g":"result.greeting"}}`
		apply = `{"op":"apply","states":[{"name":"off","r":0,"g":0,"b":0}],"rules":[],"sources":[` + src + `]`
	)
	tests := []struct {
		name  string
		input string
		code  int // 0: accepted
		msg   string
	}{
		{name: "create_source naming the plugin", input: `{"op":"create_source","sources":[` + src + `],"plugins":["hello"]}`},
		{name: "create_source without it", input: `{"op":"create_source","sources":[` + src + `]}`, code: 404, msg: `unknown tool "hello"`},
		{name: "another plugin named", input: `{"op":"create_source","sources":[` + src + `],"plugins":["other"]}`, code: 404, msg: `unknown tool "hello"`},
		{name: "an invalid plugin name is ignored", input: `{"op":"create_source","sources":[{"name":"x","interval_ms":60000,"fetch":{"tool":"Bad"},"store":{"g":"result"}}],"plugins":["Bad"]}`, code: 404, msg: `unknown tool "Bad"`},
		{name: "apply naming the plugin", input: apply + `,"plugins":["hello"]}`},
		{name: "apply without it", input: apply + `}`, code: 404, msg: `unknown tool "hello"`},
		{name: "only create_source and apply take plugins", input: `{"op":"define_tool","tools":[{"name":"x","code":"return 1"}],"plugins":["hello"]}`, code: 400, msg: "define_tool does not take plugins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLight(t)
			r := l.apply(messages.InConfig, tt.input)
			switch {
			case tt.code == 0 && r.Err != nil:
				t.Fatalf("rejected: %d %s", r.Err.Code, r.Err.Error)
			case tt.code != 0 && (r.Err == nil || r.Err.Code != tt.code || !strings.Contains(r.Err.Error, tt.msg)):
				t.Fatalf("got %+v, want code %d with %q", r.Err, tt.code, tt.msg)
			}
			if n := len(l.m.SourceList()); (n == 1) != (tt.code == 0) {
				t.Fatalf("%d sources after the input", n)
			}
		})
	}
}

// delete_tool on a tool that sources use says what to delete first: the
// sources, or for a custom transition's predicate the transition.
func TestDeleteToolInUse(t *testing.T) {
	const (
		defineT = `{"op":"define_transition","tools":[{"name":"door_open","code":"return true"}],"sources":[{"name":"door_open","type":"transition","interval_ms":1000,"fetch":{"tool":"door_open","args":{}},"fires":"door_open"}]}`
		poll    = `{"op":"create_source","sources":[{"name":"poll","interval_ms":60000,"fetch":{"tool":"door_open"},"store":{"open":"result"}}]}`
		tool    = `{"op":"define_tool","tools":[{"name":"door_open","code":"return true"}]}`
		del     = `{"op":"delete_tool","name":"door_open"}`
	)
	tests := []struct {
		name    string
		before  []string
		want    []string // in the error
		notWant string
	}{
		{name: "a transition's predicate", before: []string{defineT},
			want: []string{"predicate of custom transition \"door_open\"", "delete_transition \"door_open\""}, notWant: "delete_source"},
		{name: "a predicate another source polls too", before: []string{defineT, poll},
			want: []string{"predicate of custom transition", "data sources poll", "delete_source", "delete_transition"}},
		{name: "a tool a source uses", before: []string{tool, poll},
			want: []string{"used by data sources poll", "delete_source"}, notWant: "transition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLight(t)
			for _, b := range tt.before {
				l.config(b)
			}
			r := l.apply(messages.InConfig, del)
			if r.Err == nil || r.Err.Code != 409 {
				t.Fatalf("got %+v, want a 409", r.Err)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Err.Error, w) {
					t.Errorf("%q does not say %q", r.Err.Error, w)
				}
			}
			if tt.notWant != "" && strings.Contains(r.Err.Error, tt.notWant) {
				t.Errorf("%q says %q", r.Err.Error, tt.notWant)
			}
		})
	}
}

// A poll source that only fires is accepted from level 2 on; a light
// journaled before refused it, and replays the refusal.
func TestPollSourceThatOnlyFiresByLevel(t *testing.T) {
	const in = `{"op":"create_source","sources":[{"name":"test","interval_ms":60000,"fetch":{"tool":"hello","args":{}},"fires":"test_updated"}],"plugins":["hello"]}`
	old := newLight(t)
	if r := old.apply(messages.InConfig, in); r.Err == nil || r.Err.Code != 400 || !strings.Contains(r.Err.Error, "store is empty") {
		t.Fatalf("below level 2: got %+v, want the refusal of then", r.Err)
	}
	now := upgraded(t)
	if r := now.apply(messages.InConfig, in); r.Err != nil {
		t.Fatalf("at level %d: rejected: %d %s", machine.Level, r.Err.Code, r.Err.Error)
	}
	if n := len(now.m.SourceList()); n != 1 {
		t.Fatalf("%d sources, want 1", n)
	}
}
