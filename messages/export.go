package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Writing a configuration for a person to read: YAML whose keys come in
// the order one reads a light, quoted only where YAML needs it, and that
// ToJSON reads back to the same configuration.

// ToYAML writes c as YAML that a person reads and that ToJSON (lumen
// apply -f) takes back to the same configuration.
//
// The top-level keys come in the order a light is read: what people call
// it (room, aliases), where it starts (initial), what it shows (states), how it moves between them (rules,
// which name states), the functions their expressions call, the
// temporary layers of rules over them, the data rules read and write
// (vars), then what fires transitions from outside: schedules, tools (the
// code) and sources (which call tools, so they come after them). Within a
// state, rule, function, schedule or tool the keys come as their
// documentation lists them, within a layer its name, what is left of its
// lifetime, restore, began_state, then its rules; a rule's priority is
// written only when it is not 0, enabled only when false, a layer's
// restore only when false. Vars are sorted by name; the JSON values of vars, tool params
// and returns, and sources keep the key order of their JSON text, a
// source's name first.
//
// The built-in off state is left out when it is plain (0, 0, 0, no speed,
// no description): applying a file without it keeps it. It stays when it
// is the only state and there are no rules, so that the file of an empty
// light is not refused as empty. Vars that are empty but not nil are
// written as {} (apply then clears the light's vars; without vars it
// keeps them). A schedule's next time, which the light computes, is not
// written, nor are state, confirm_empty, dry_run and if_seq, which say
// how to apply a configuration, not what it is.
//
// Strings are plain where YAML reads them back as the same string (on,
// off, yes and no included: ToJSON reads YAML 1.2), quoted where it would
// not ("true", "1", "null", "", "*x", "a: b"), and multi-line strings are
// literal blocks (|) unless they have characters a block cannot hold.
// Invalid UTF-8 is replaced as encoding/json replaces it. A number that
// is not finite is an error.
func ToYAML(c ApplyRequest) ([]byte, error) {
	top := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if c.Room != "" {
		addPair(top, "room", str(c.Room))
	}
	if len(c.Aliases) > 0 {
		seq := seqNode()
		for _, a := range c.Aliases {
			seq.Content = append(seq.Content, str(a))
		}
		addPair(top, "aliases", seq)
	}
	if c.Initial != "" {
		addPair(top, "initial", str(c.Initial))
	}
	if c.OnState != "" {
		addPair(top, "on_state", str(c.OnState))
	}
	if c.PowerOn != "" {
		addPair(top, "power_on", str(c.PowerOn))
	}
	if c.TransitionMs != nil {
		addPair(top, "transition_ms", intNode(int64(*c.TransitionMs)))
	}

	states := c.States
	if len(states) > 1 || len(c.Rules) > 0 {
		states = slices.DeleteFunc(slices.Clone(states), plainOff)
	}
	if len(states) > 0 {
		seq := seqNode()
		for i, s := range states {
			n, err := stateNode(s)
			if err != nil {
				return nil, fmt.Errorf("messages: states[%d]: %w", i, err)
			}
			seq.Content = append(seq.Content, n)
		}
		addPair(top, "states", seq)
	}

	if len(c.Rules) > 0 {
		seq := seqNode()
		for _, r := range c.Rules {
			seq.Content = append(seq.Content, ruleNode(r))
		}
		addPair(top, "rules", seq)
	}

	if len(c.Functions) > 0 {
		seq := seqNode()
		for _, f := range c.Functions {
			seq.Content = append(seq.Content, functionNode(f))
		}
		addPair(top, "functions", seq)
	}

	if len(c.Layers) > 0 {
		seq := seqNode()
		for _, l := range c.Layers {
			seq.Content = append(seq.Content, layerNode(l))
		}
		addPair(top, "layers", seq)
	}

	if c.Vars != nil {
		m := mapNode()
		for _, name := range slices.Sorted(maps.Keys(c.Vars)) {
			v, err := jsonNode(c.Vars[name])
			if err != nil {
				return nil, fmt.Errorf("messages: vars.%s: %w", name, err)
			}
			addPair(m, name, v)
		}
		addPair(top, "vars", m)
	}

	if len(c.Schedules) > 0 {
		seq := seqNode()
		for _, s := range c.Schedules {
			m := mapNode()
			addPair(m, "name", str(s.Name))
			if s.Cron != "" || s.Sun == "" {
				addPair(m, "cron", str(s.Cron))
			}
			if s.Sun != "" {
				addPair(m, "sun", str(s.Sun))
			}
			if s.Offset != "" {
				addPair(m, "offset", str(s.Offset))
			}
			for _, c := range []struct {
				key string
				v   *float64
			}{{"lat", s.Lat}, {"lon", s.Lon}} {
				if c.v == nil {
					continue
				}
				n, err := floatNode(*c.v)
				if err != nil {
					return nil, fmt.Errorf("schedule %s: %s: %w", s.Name, c.key, err)
				}
				addPair(m, c.key, n)
			}
			if s.TZ != "" {
				addPair(m, "tz", str(s.TZ))
			}
			addPair(m, "fires", str(s.Fires))
			seq.Content = append(seq.Content, m)
		}
		addPair(top, "schedules", seq)
	}

	if len(c.Tools) > 0 {
		seq := seqNode()
		for i, t := range c.Tools {
			n, err := toolNode(t)
			if err != nil {
				return nil, fmt.Errorf("messages: tools[%d].%w", i, err)
			}
			seq.Content = append(seq.Content, n)
		}
		addPair(top, "tools", seq)
	}

	if len(c.Sources) > 0 {
		seq := seqNode()
		for i, raw := range c.Sources {
			n, err := jsonNode(raw)
			if err != nil {
				return nil, fmt.Errorf("messages: sources[%d]: %w", i, err)
			}
			nameFirst(n)
			seq.Content = append(seq.Content, n)
		}
		addPair(top, "sources", seq)
	}

	// What is written is read back and compared; if it differs, it is
	// written again without the disguise (see render).
	out, err := render(top, true)
	if err == nil {
		err = sameYAML(out, top)
	}
	if err != nil {
		if out, err = render(top, false); err == nil {
			err = sameYAML(out, top)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("messages: writing YAML: %w", err)
	}
	return out, nil
}

// render encodes top; top is left as it was. A multi-line string that
// yaml.v3 would write as a literal block it cannot read back (one that
// starts with a tab) is double-quoted. Pretty, the characters beyond the
// BMP, which yaml.v3 escapes ("\U0001F308"), forcing double quotes on the
// string, are written in disguise and put back after; and a string with
// single quotes that yaml.v3 would single-quote, doubling each of them,
// is double-quoted: "getData('n') > 0 ? 1 : 0".
func render(top *yaml.Node, pretty bool) ([]byte, error) {
	type saved struct {
		n     *yaml.Node
		value string
		style yaml.Style
	}
	var restore []saved
	defer func() {
		for _, s := range restore {
			s.n.Value, s.n.Style = s.value, s.style
		}
	}()
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
			return nil
		}
		restore = append(restore, saved{n, n.Value, n.Style})
		s := n.Value
		if pretty {
			n.Value = disguise(s)
		}
		switch {
		case strings.Contains(s, "\n"):
			ok, err := readsBack(n)
			if err != nil {
				return err
			}
			if !ok {
				n.Style = yaml.DoubleQuotedStyle
			}
		case pretty && n.Style == 0 && strings.Contains(s, "'") && !strings.ContainsAny(s, "\"\\"):
			q, err := encode(n)
			if err != nil {
				return err
			}
			if q[0] == '\'' {
				n.Style = yaml.DoubleQuotedStyle
			}
		}
		return nil
	}
	if err := walk(top); err != nil {
		return nil, err
	}
	out, err := encode(top)
	if err != nil {
		return nil, err
	}
	if pretty {
		out = undisguise(out)
	}
	return out, nil
}

// readsBack reports whether yaml.v3 reads the string n back as it writes
// it, as the value of a key.
func readsBack(n *yaml.Node) (bool, error) {
	out, err := encode(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str("k"), n}})
	if err != nil {
		return false, err
	}
	var back map[string]any
	return yaml.Unmarshal(out, &back) == nil && back["k"] == n.Value, nil
}

func encode(n *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// disguiseMark starts a disguised character: the mark and six hex digits
// of the character. It is a private-use character, which yaml.v3 writes
// as it is; a mark in a string is disguised too.
const disguiseMark = '\uE000'

// disguise hides from yaml.v3 the characters beyond the BMP, which it
// would escape.
func disguise(s string) string {
	hide := func(r rune) bool { return r > 0xFFFF || r == disguiseMark }
	if strings.IndexFunc(s, hide) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hide(r) {
			fmt.Fprintf(&b, "%c%06X", disguiseMark, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// undisguise puts the disguised characters back.
func undisguise(out []byte) []byte {
	mark := string(disguiseMark)
	if !bytes.Contains(out, []byte(mark)) {
		return out
	}
	var b bytes.Buffer
	for {
		i := bytes.Index(out, []byte(mark))
		if i < 0 || i+len(mark)+6 > len(out) {
			b.Write(out)
			return b.Bytes()
		}
		b.Write(out[:i])
		r, err := strconv.ParseUint(string(out[i+len(mark):i+len(mark)+6]), 16, 32)
		if err != nil { // cannot happen: every mark was written by disguise
			b.WriteString(mark)
			out = out[i+len(mark):]
			continue
		}
		b.WriteRune(rune(r))
		out = out[i+len(mark)+6:]
	}
}

// sameYAML reads out back and checks that it is want: the same strings,
// numbers, booleans and nulls in the same places.
func sameYAML(out []byte, want *yaml.Node) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(out, &doc); err != nil {
		return err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return errors.New("does not read back as one document")
	}
	return sameNode(doc.Content[0], want, "")
}

func sameNode(got, want *yaml.Node, path string) error {
	if got.Kind != want.Kind || len(got.Content) != len(want.Content) {
		return fmt.Errorf("%s does not read back as written", path)
	}
	if want.Kind == yaml.ScalarNode {
		merge := got.Value == "<<" && got.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0
		if got.Value != want.Value || got.ShortTag() != want.Tag || merge {
			return fmt.Errorf("%s %q reads back as %s %q", path, want.Value, got.ShortTag(), got.Value)
		}
	}
	for i := range want.Content {
		if err := sameNode(got.Content[i], want.Content[i], fmt.Sprintf("%s/%d", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// plainOff reports whether s is the built-in off state as it comes.
func plainOff(s State) bool {
	zero := func(c Channel) bool { return !c.IsExpr() && c.Num == 0 }
	return s.Name == "off" && zero(s.R) && zero(s.G) && zero(s.B) && s.Speed == nil && s.Description == ""
}

func stateNode(s State) (*yaml.Node, error) {
	m := mapNode()
	addPair(m, "name", str(s.Name))
	for _, ch := range []struct {
		key string
		c   Channel
	}{{"r", s.R}, {"g", s.G}, {"b", s.B}} {
		if ch.c.IsExpr() {
			addPair(m, ch.key, str(ch.c.Expr))
			continue
		}
		n, err := floatNode(ch.c.Num)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ch.key, err)
		}
		addPair(m, ch.key, n)
	}
	if s.Speed != nil {
		addPair(m, "speed", intNode(int64(*s.Speed)))
	}
	if s.Description != "" {
		addPair(m, "description", str(s.Description))
	}
	return m, nil
}

func ruleNode(r Rule) *yaml.Node {
	m := mapNode()
	if r.ID != "" {
		addPair(m, "id", str(r.ID))
	}
	addPair(m, "from", str(r.From))
	addPair(m, "on", str(r.On))
	addPair(m, "to", str(r.To))
	if r.FadeMs != 0 {
		addPair(m, "fade_ms", intNode(int64(r.FadeMs)))
	}
	if r.Condition != "" {
		addPair(m, "condition", str(r.Condition))
	}
	if r.Action != "" {
		addPair(m, "action", str(r.Action))
	}
	if r.Priority != 0 {
		addPair(m, "priority", intNode(int64(r.Priority)))
	}
	if !r.Enabled {
		addPair(m, "enabled", boolNode(false))
	}
	return m
}

// layerNode writes a layer: its name, what is left of its lifetime,
// restore (only when false) and the state it began in, then its rules.
func layerNode(l Layer) *yaml.Node {
	m := mapNode()
	addPair(m, "name", str(l.Name))
	switch {
	case l.FiresLeft != nil:
		addPair(m, "fires_left", intNode(int64(*l.FiresLeft)))
	case l.Deadline != nil:
		addPair(m, "deadline", str(l.Deadline.UTC().Format(time.RFC3339Nano)))
	case l.Until != "":
		addPair(m, "until", str(l.Until))
	}
	if !l.Restore {
		addPair(m, "restore", boolNode(false))
	}
	addPair(m, "began_state", str(l.BeganState))
	seq := seqNode()
	for _, r := range l.Rules {
		seq.Content = append(seq.Content, ruleNode(r))
	}
	addPair(m, "rules", seq)
	return m
}

func functionNode(f Function) *yaml.Node {
	m := mapNode()
	addPair(m, "name", str(f.Name))
	if f.Description != "" {
		addPair(m, "description", str(f.Description))
	}
	if len(f.Params) > 0 {
		seq := seqNode()
		seq.Style = yaml.FlowStyle
		for _, p := range f.Params {
			seq.Content = append(seq.Content, str(p))
		}
		addPair(m, "params", seq)
	}
	addPair(m, "code", str(f.Code))
	return m
}

func toolNode(t Tool) (*yaml.Node, error) {
	m := mapNode()
	addPair(m, "name", str(t.Name))
	if t.Description != "" {
		addPair(m, "description", str(t.Description))
	}
	if len(t.Params) > 0 {
		n, err := jsonNode(t.Params)
		if err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
		addPair(m, "params", n)
	}
	addPair(m, "code", str(t.Code))
	if len(t.Returns) > 0 {
		n, err := jsonNode(t.Returns)
		if err != nil {
			return nil, fmt.Errorf("returns: %w", err)
		}
		addPair(m, "returns", n)
	}
	if len(t.Hosts) > 0 {
		seq := seqNode()
		for _, h := range t.Hosts {
			seq.Content = append(seq.Content, str(h))
		}
		addPair(m, "hosts", seq)
	}
	return m, nil
}

// nameFirst moves the key name of mapping n to the front.
func nameFirst(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 2; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "name" {
			k, v := n.Content[i], n.Content[i+1]
			copy(n.Content[2:i+2], n.Content[:i])
			n.Content[0], n.Content[1] = k, v
			return
		}
	}
}

// jsonNode converts one JSON value to YAML, objects keeping the order of
// their keys; of a key given twice the last value is kept, in the place
// of the first, as encoding/json keeps it.
func jsonNode(raw json.RawMessage) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := readJSON(dec)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the value")
	}
	return n, nil
}

func readJSON(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := mapNode()
			at := map[string]int{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string) // the decoder gives only strings here
				v, err := readJSON(dec)
				if err != nil {
					return nil, err
				}
				if i, ok := at[key]; ok {
					m.Content[i+1] = v
					continue
				}
				at[key] = len(m.Content)
				addPair(m, key, v)
			}
			_, err := dec.Token() // }
			return m, err
		case '[':
			seq := seqNode()
			for dec.More() {
				v, err := readJSON(dec)
				if err != nil {
					return nil, err
				}
				seq.Content = append(seq.Content, v)
			}
			_, err := dec.Token() // ]
			return seq, err
		}
	case string:
		return str(t), nil
	case json.Number:
		return numberNode(t)
	case bool:
		return boolNode(t), nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}

// numberNode writes a JSON number as YAML reads it back: an integer that
// fits 64 bits as it is, any other number as the shortest float.
func numberNode(n json.Number) (*yaml.Node, error) {
	s := n.String()
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return intNode(i), nil
	}
	if _, err := strconv.ParseUint(s, 10, 64); err == nil {
		return scalar("!!int", s), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("number %s does not fit a 64-bit float", s)
	}
	return floatNode(f)
}

// floatNode writes f as encoding/json does, exponents shortest: 255,
// 0.5, 1e-7, 1e21; YAML reads each back as the same number.
func floatNode(f float64) (*yaml.Node, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%v is not a number JSON or YAML can hold", f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	s := strconv.FormatFloat(f, format, -1, 64)
	if format == 'e' { // 1e+21 → 1e21, 1e-07 → 1e-7
		mant, exp, _ := strings.Cut(s, "e")
		neg := strings.HasPrefix(exp, "-")
		exp = strings.TrimLeft(exp, "+-0")
		if neg {
			exp = "-" + exp
		}
		s = mant + "e" + exp
	}
	if f == 0 {
		s = "0" // not -0
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: s}
	n.Tag = n.ShortTag() // !!int for 255, !!float for 0.5 and 1e21
	if n.Tag != "!!int" && n.Tag != "!!float" {
		return nil, fmt.Errorf("number %s would read back as %s", s, n.Tag)
	}
	return n, nil
}

func intNode(i int64) *yaml.Node { return scalar("!!int", strconv.FormatInt(i, 10)) }

func boolNode(b bool) *yaml.Node { return scalar("!!bool", strconv.FormatBool(b)) }

// str is a string node. yaml.v3 writes a !!str node of no style plain
// unless reading it back would give another type (it then double-quotes
// it) or the text cannot be plain (it then single-quotes it); unlike its
// marshaling of a Go string it leaves on, off, yes and no plain, which
// YAML 1.2 reads as strings.
func str(s string) *yaml.Node {
	if !utf8.ValidString(s) {
		b, _ := json.Marshal(s) // invalid bytes become U+FFFD, as in JSON
		_ = json.Unmarshal(b, &s)
	}
	n := scalar("!!str", s)
	switch {
	case strings.Contains(s, "\n"):
		n.Style = yaml.LiteralStyle
	case s == "<<": // a plain << key is a merge
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

func mapNode() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

func seqNode() *yaml.Node { return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"} }

func addPair(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, str(key), v)
}
