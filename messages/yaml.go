package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

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

// Line returns the line of a file (YAML or JSON) on which the field
// named by the first path in msg (rules[2].priority, as Decode's errors
// and a light's refusals name them) is written, or 0.
func Line(raw []byte, msg string) int {
	var doc yaml.Node
	if yaml.Unmarshal(raw, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	top := doc.Content[0]
	for _, path := range fieldPath.FindAllString(msg, -1) {
		if n := lookup(top, path); n != nil {
			return n.Line
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
					return item.Line
				}
			}
		}
	}
	return 0
}

var named = regexp.MustCompile(`\b(?:(state|schedule|tool|source|function) "([^"]+)"|rule (r\d+)\b)`)

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
