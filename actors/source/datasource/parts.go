package datasource

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Parts are a definition given piece by piece, as `lumen source add`'s
// flags give it (their names are in the errors). The kind follows from
// the parts when Type is empty: Tracks makes an internal source, Subject
// a nats one, Topic an mqtt one, Token a webhook; else a poll.
type Parts struct {
	Name     string
	Type     string
	Interval time.Duration
	Tool     string
	Args     string   // a JSON object
	Store    []string // VAR=PATH
	Fires    string
	Tracks   string
	Subject  string
	Topic    string
	Token    string
}

// JSON returns the definition the parts make, for create_source. Only
// the parts themselves are checked; the light validates the definition.
func (p Parts) JSON() ([]byte, error) {
	def := map[string]any{"name": p.Name}
	typ := p.Type
	if typ == "" {
		switch {
		case p.Tracks != "":
			typ = TypeInternal
		case p.Subject != "":
			typ = TypeNATS
		case p.Topic != "":
			typ = TypeMQTT
		case p.Token != "":
			typ = TypeWebhook
		}
	}
	if typ != "" {
		def["type"] = typ
	}
	if p.Interval != 0 {
		if p.Interval < time.Millisecond {
			return nil, fmt.Errorf("--interval %s is too short; give a duration like 30s or 1h", p.Interval)
		}
		def["interval_ms"] = p.Interval.Milliseconds()
	}
	if p.Tool != "" || p.Args != "" {
		fetch := map[string]any{"tool": p.Tool}
		if p.Args != "" {
			if !json.Valid([]byte(p.Args)) {
				return nil, fmt.Errorf("--args is not JSON: %s; give an object like '{\"location\":\"Paris\"}'", p.Args)
			}
			fetch["args"] = json.RawMessage(p.Args)
		}
		def["fetch"] = fetch
	}
	if len(p.Store) > 0 {
		store := make(map[string]string, len(p.Store))
		for _, s := range p.Store {
			v, path, ok := strings.Cut(s, "=")
			if !ok || v == "" || path == "" {
				return nil, fmt.Errorf("--store %q: give VAR=PATH, e.g. --store temperature=result.temp", s)
			}
			if _, dup := store[v]; dup {
				return nil, fmt.Errorf("--store: variable %s is given twice", v)
			}
			store[v] = path
		}
		def["store"] = store
	}
	for k, v := range map[string]string{"fires": p.Fires, "tracks": p.Tracks, "subject": p.Subject, "topic": p.Topic, "token": p.Token} {
		if v != "" {
			def[k] = v
		}
	}
	return json.Marshal(def)
}
