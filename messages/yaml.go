package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Reading what a person wrote in a file: YAML or JSON, with the line a
// mistake is on.

// SourceError is a mistake in a file, at a line (1-based).
type SourceError struct {
	Line int
	Msg  string
}

func (e *SourceError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ToJSON reads a configuration a person wrote, JSON or YAML (as the
// file's extension ext says, else as it looks), and returns it as JSON.
// A YAML mistake is a *SourceError with the line it is on.
func ToJSON(raw []byte, ext string) ([]byte, error) {
	trimmed := bytes.TrimSpace(raw)
	if ext == ".json" || (len(trimmed) > 0 && trimmed[0] == '{') {
		if !json.Valid(trimmed) {
			var v any
			return nil, fmt.Errorf("invalid JSON: %s", Explain(json.Unmarshal(trimmed, &v)))
		}
		return trimmed, nil
	}
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		var te *yaml.TypeError // a key given twice
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg = te.Errors[0]
		}
		line := problemLine(raw, msg)
		return nil, &SourceError{Line: line, Msg: "invalid YAML: " + reportedLine.ReplaceAllString(msg, "")}
	}
	return json.Marshal(v)
}

var reportedLine = regexp.MustCompile(`^line (\d+): `)

// maxProblemScan bounds the parses problemLine makes (one per line from
// the end of the file back to the mistake).
const maxProblemScan = 2000

// problemLine finds the line of a YAML file's first mistake. The parser
// names the line where the construct it was reading began (a list that
// starts on line 1 for a bad indent on line 4); the mistake is on the line
// after the longest beginning of the file that parses.
func problemLine(raw []byte, msg string) int {
	lines := bytes.SplitAfter(bytes.TrimRight(raw, "\n"), []byte("\n"))
	for k := len(lines) - 1; k >= 0 && len(lines)-k <= maxProblemScan; k-- {
		var v any
		if yaml.Unmarshal(bytes.Join(lines[:k], nil), &v) == nil {
			return k + 1
		}
	}
	// Too long to search: the parser's line is near.
	if m := reportedLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 1
}

// fieldPath finds a field path (rules[2].priority) in an error message.
var fieldPath = regexp.MustCompile(`\b(?:states|rules|vars|schedules|tools|sources|functions|layers|initial)(?:\[\d+\]|\.[A-Za-z_][A-Za-z0-9_-]*)*`)

// Pos is a place in a file a person wrote: line and column from 1; Col
// is 0 when only the line is known, and Line too when nothing is.
type Pos struct{ Line, Col int }

// Line returns the line of a file (YAML or JSON) on which the field
// named by the first path in msg (rules[2].priority, as Decode's errors
// and a light's refusals name them) is written, or 0.
func Line(raw []byte, msg string) int { return Locate(raw, msg).Line }

// Locate returns where in a file (YAML or JSON) the thing msg names is
// written, as Line finds it, narrowed to the part msg blames (channel b,
// the condition, the code) and, for a syntax error at a line and column
// of that expression (or at its end), to that character of the file.
func Locate(raw []byte, msg string) Pos {
	var doc yaml.Node
	if yaml.Unmarshal(raw, &doc) != nil || len(doc.Content) == 0 {
		return Pos{}
	}
	n := blamed(doc.Content[0], msg)
	if n == nil {
		return Pos{}
	}
	if m := blamedPart.FindStringSubmatch(msg); m != nil && n.Kind == yaml.MappingNode {
		key := m[1] + m[2] + m[3]
		if v, _ := step(n, "", key); v != nil {
			n = v
		}
	}
	if n.Kind == yaml.ScalarNode {
		if p, ok := inScalar(raw, n, msg); ok {
			return p
		}
	}
	return Pos{Line: n.Line}
}

// blamed finds the node msg names: by its path, or by the name a light
// calls it.
func blamed(top *yaml.Node, msg string) *yaml.Node {
	// Decode names an unknown key by its path, at any depth.
	if m := unknownKey.FindStringSubmatch(msg); m != nil {
		if n := lookupKey(top, m[1]); n != nil {
			return n
		}
	}
	for _, path := range fieldPath.FindAllString(msg, -1) {
		if n := lookup(top, path); n != nil {
			return n
		}
	}
	// A light names what it refuses by name: state "x", rule r4.
	for _, m := range named.FindAllStringSubmatch(msg, -1) {
		list, key, value := m[1]+"s", "name", m[2]
		if m[3] != "" {
			list, key, value = "rules", "id", m[3]
		}
		if n := lookup(top, list); n != nil && n.Kind == yaml.SequenceNode {
			for _, item := range n.Content {
				if v, _ := step(item, "", key); v != nil && v.Value == value {
					return item
				}
			}
		}
	}
	return nil
}

var (
	unknownKey = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_-]*(?:\[\d+\]|\.[A-Za-z_][A-Za-z0-9_-]*)*): unknown field`)
	// blamedPart is the part of a state, rule, layer, function or tool a
	// refusal blames, by the key it is written under.
	blamedPart = regexp.MustCompile(`\bchannel ([rgb])\b|\bthe (condition|action|code)\b|'s (until)\b`)
	// syntaxAt is where an expression's syntax error is, in the expression.
	syntaxAt = regexp.MustCompile(`syntax error at (?:line (\d+), column (\d+)|the end)`)
)

// lookupKey finds the key (not its value) that path ends with: an
// unknown key is blamed where it is written.
func lookupKey(top *yaml.Node, path string) *yaml.Node {
	parent, key := top, path
	if i := strings.LastIndexAny(path, ".["); i > 0 && path[i] == '.' {
		parent, key = lookup(top, path[:i]), path[i+1:]
	}
	if parent == nil || parent.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(parent.Content); i += 2 {
		if parent.Content[i].Value == key {
			return parent.Content[i]
		}
	}
	return nil
}

// inScalar places a syntax error msg reports at a line and column of
// the expression n holds (or at its end) in the file: it finds the
// expression's lines, one after the other, in the text from n on, so
// that quotes, indents and block scalars shift nothing. A line it cannot
// find (an escape in a quoted string, a folded line) gives up.
func inScalar(raw []byte, n *yaml.Node, msg string) (Pos, bool) {
	m := syntaxAt.FindStringSubmatch(msg)
	if m == nil {
		return Pos{}, false
	}
	lines := strings.Split(strings.TrimRight(n.Value, "\n"), "\n")
	line, col := len(lines), 0 // at the end: its last character
	if m[1] != "" {
		line, _ = strconv.Atoi(m[1])
		col, _ = strconv.Atoi(m[2])
	}
	if line < 1 || line > len(lines) {
		return Pos{}, false
	}
	text := string(raw)
	at := offset(text, n.Line, n.Column)
	if at < 0 {
		return Pos{}, false
	}
	for i, l := range lines[:line] {
		lead := len(l) - len(strings.TrimLeft(l, " \t"))
		k := strings.Index(text[at:], l[lead:])
		if k < 0 {
			return Pos{}, false
		}
		if i < line-1 {
			at += k + len(l) - lead
			continue
		}
		at += k
		if col == 0 { // its last character
			col = lead + utf8.RuneCountInString(strings.TrimRight(l[lead:], " \t"))
		}
		// col counts characters of l; what precedes l[lead:] is not in the file.
		rest := []rune(l[lead:])
		skip := min(max(col-1-lead, 0), max(len(rest)-1, 0))
		at += len(string(rest[:skip]))
	}
	before := text[:at]
	start := strings.LastIndexByte(before, '\n') + 1
	return Pos{Line: strings.Count(before, "\n") + 1, Col: utf8.RuneCountInString(before[start:]) + 1}, true
}

// offset is the byte offset of line and column (from 1, in characters)
// of text, or -1.
func offset(text string, line, col int) int {
	at := 0
	for range line - 1 {
		i := strings.IndexByte(text[at:], '\n')
		if i < 0 {
			return -1
		}
		at += i + 1
	}
	for range col - 1 {
		if at >= len(text) || text[at] == '\n' {
			break
		}
		_, size := utf8.DecodeRuneInString(text[at:])
		at += size
	}
	return at
}

var named = regexp.MustCompile(`\b(?:(state|schedule|tool|source|function|layer) "([^"]+)"|rule (r\d+)\b)`)

var pathStep = regexp.MustCompile(`\[(\d+)\]|\.?([A-Za-z_][A-Za-z0-9_-]*)`)

// lookup follows path from n; it returns the deepest node it reaches
// when the path goes on further than the file (a missing field is
// blamed on its parent), nil when its first step is not there.
func lookup(n *yaml.Node, path string) *yaml.Node {
	var at *yaml.Node
	for _, m := range pathStep.FindAllStringSubmatch(path, -1) {
		next, err := step(n, m[1], m[2])
		if err != nil {
			break
		}
		n, at = next, next
	}
	return at
}

func step(n *yaml.Node, index, key string) (*yaml.Node, error) {
	switch {
	case index != "" && n.Kind == yaml.SequenceNode:
		i, _ := strconv.Atoi(index)
		if i < len(n.Content) {
			return n.Content[i], nil
		}
	case key != "" && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1], nil
			}
		}
	}
	return nil, errors.New("no such field")
}

// WithTrue sets key to true in a JSON object, after what it has: the
// request says so, whatever the file says. An empty file (null) is {}.
func WithTrue(body []byte, key string) []byte { return WithField(body, key, true) }

// WithField sets key to v in a JSON object as WithTrue does.
func WithField(body []byte, key string, v any) []byte {
	val, err := json.Marshal(v)
	if err != nil {
		val = []byte("null")
	}
	body = bytes.TrimSpace(body)
	if !bytes.HasPrefix(body, []byte("{")) {
		body = []byte("{}")
	}
	b, _ := bytes.CutSuffix(body, []byte("}"))
	sep := ","
	if bytes.Equal(bytes.TrimSpace(b), []byte("{")) {
		sep = ""
	}
	return fmt.Appendf(nil, "%s%s%q:%s}", b, sep, key, val)
}
