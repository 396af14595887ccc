package datasource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Segment is one step of a Path: an object key, or an array index when
// IsIndex (negative indexes count from the end: -1 is the last item).
type Segment struct {
	Key     string
	Index   int
	IsIndex bool
}

// Path is a parsed store path, the steps after "result".
type Path []Segment

// MaxPathSegments bounds the depth of a path.
const MaxPathSegments = 32

// ParsePath parses a store path:
//
//	result                 the whole result
//	result.main.temp       object keys: letters, digits, '_', '-' and '$'
//	result.items[0].price  an array index; [-1] is the last item
//	result["key with space"], result['it''s']  any key, JSON or JS quoted
func ParsePath(s string) (Path, error) {
	src := s
	if !utf8.ValidString(s) {
		// A key must name a key of JSON, which is text.
		return nil, fmt.Errorf("path %q is not valid UTF-8", src)
	}
	s = strings.TrimSpace(s)
	rest, ok := strings.CutPrefix(s, "result")
	if !ok || (rest != "" && rest[0] != '.' && rest[0] != '[') {
		return nil, fmt.Errorf("path %q does not start with result; write it like result.main.temp", src)
	}
	var p Path
	pos := len("result")
	for rest != "" {
		if len(p) == MaxPathSegments {
			return nil, fmt.Errorf("path %q is deeper than %d steps", src, MaxPathSegments)
		}
		switch rest[0] {
		case '.':
			n := 1
			for n < len(rest) && isKeyByte(rest[n]) {
				n++
			}
			if n == 1 {
				return nil, fmt.Errorf("path %q: expected a key after '.' at byte %d; write .key, or [\"key\"] for other characters", src, pos)
			}
			p = append(p, Segment{Key: rest[1:n]})
			rest, pos = rest[n:], pos+n
		case '[':
			seg, n, err := parseBracket(rest)
			if err != nil {
				return nil, fmt.Errorf("path %q: %s at byte %d", src, err, pos)
			}
			p = append(p, seg)
			rest, pos = rest[n:], pos+n
		default:
			return nil, fmt.Errorf("path %q: unexpected %q at byte %d; continue with .key, [N] or [\"key\"]", src, rest[0], pos)
		}
	}
	return p, nil
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '$'
}

// parseBracket reads [N], ["key"] or ['key'] at the start of s and returns
// the segment and the bytes it took.
func parseBracket(s string) (Segment, int, error) {
	if len(s) < 2 {
		return Segment{}, 0, fmt.Errorf("'[' is not closed")
	}
	switch q := s[1]; q {
	case '"', '\'':
		var key strings.Builder
		for i := 2; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '\\' && q == '\'':
				if i+1 == len(s) {
					return Segment{}, 0, fmt.Errorf("the quoted key is not closed")
				}
				i++
				key.WriteByte(s[i])
			case c == '\\':
				i++ // skip the escaped byte; json.Unmarshal decodes it below
			case c == q:
				if i+1 >= len(s) || s[i+1] != ']' {
					return Segment{}, 0, fmt.Errorf("expected ']' after the quoted key")
				}
				if q == '\'' {
					return Segment{Key: key.String()}, i + 2, nil
				}
				var k string
				if err := json.Unmarshal([]byte(s[1:i+1]), &k); err != nil {
					return Segment{}, 0, fmt.Errorf("the key %s is not a valid JSON string", s[1:i+1])
				}
				return Segment{Key: k}, i + 2, nil
			default:
				key.WriteByte(c)
			}
		}
		return Segment{}, 0, fmt.Errorf("the quoted key is not closed")
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return Segment{}, 0, fmt.Errorf("'[' is not closed")
	}
	n, err := strconv.Atoi(s[1:end])
	if err != nil || s[1] == '+' {
		return Segment{}, 0, fmt.Errorf("[%s] is not an index; use [0], [1] … (or [-1] for the last item), or [\"key\"] for a key", s[1:end])
	}
	return Segment{Index: n, IsIndex: true}, end + 1, nil
}

// String writes the path in its canonical form, which ParsePath reads back.
func (p Path) String() string {
	var b strings.Builder
	b.WriteString("result")
	for _, s := range p {
		b.WriteString(s.String())
	}
	return b.String()
}

// String writes the segment as it appears in a path: .key, [N] or ["key"].
func (s Segment) String() string {
	if s.IsIndex {
		return "[" + strconv.Itoa(s.Index) + "]"
	}
	plain := s.Key != ""
	for i := 0; i < len(s.Key); i++ {
		plain = plain && isKeyByte(s.Key[i])
	}
	if plain {
		return "." + s.Key
	}
	q, _ := json.Marshal(s.Key)
	return "[" + string(q) + "]"
}

// Extract returns the value at path in result, compacted. An error names
// the step that is missing and what is there instead.
func Extract(result json.RawMessage, path string) (json.RawMessage, error) {
	p, err := ParsePath(path)
	if err != nil {
		return nil, &Error{Code: CodeInvalid, Msg: err.Error()}
	}
	return p.Extract(result)
}

// maxKeysListed bounds the keys an error lists.
const maxKeysListed = 8

// Extract returns the value at p in result, compacted.
func (p Path) Extract(result json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, result); err != nil {
		return nil, errorf(CodeBadResult, "the result is not valid JSON (%s), so %s cannot be read", strings.TrimPrefix(err.Error(), "json: "), p)
	}
	cur := json.RawMessage(buf.Bytes())
	for i, seg := range p {
		at := p[:i]
		switch cur[0] {
		case '{':
			if seg.IsIndex {
				return nil, errorf(CodeBadResult, "%s is an object, not an array, so %s cannot be read; use .key", at, p[:i+1])
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(cur, &m); err != nil {
				return nil, errorf(CodeBadResult, "%s cannot be read: %v", at, err)
			}
			v, ok := m[seg.Key]
			if !ok {
				return nil, errorf(CodeBadResult, "%s has no key %q (%s)", at, seg.Key, listKeys(m))
			}
			cur = v
		case '[':
			var a []json.RawMessage
			if err := json.Unmarshal(cur, &a); err != nil {
				return nil, errorf(CodeBadResult, "%s cannot be read: %v", at, err)
			}
			if !seg.IsIndex {
				return nil, errorf(CodeBadResult, "%s is an array, not an object, so %s cannot be read; index it like %s[0]", at, p[:i+1], at)
			}
			n := seg.Index
			if n < 0 {
				n += len(a)
			}
			if n < 0 || n >= len(a) {
				return nil, errorf(CodeBadResult, "%s has %s, so %s is out of range", at, items(len(a)), seg)
			}
			cur = a[n]
		default:
			return nil, errorf(CodeBadResult, "%s is %s, not an %s, so %s cannot be read", at, kindOf(cur), map[bool]string{true: "array", false: "object"}[seg.IsIndex], p[:i+1])
		}
	}
	return cur, nil
}

func listKeys(m map[string]json.RawMessage) string {
	if len(m) == 0 {
		return "it is empty"
	}
	keys := slices.Sorted(maps.Keys(m))
	more := ""
	if len(keys) > maxKeysListed {
		more = fmt.Sprintf(" and %d more", len(keys)-maxKeysListed)
		keys = keys[:maxKeysListed]
	}
	return "it has " + strings.Join(keys, ", ") + more
}

// kindOf names the JSON kind of a compacted value.
func kindOf(v json.RawMessage) string {
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func items(n int) string {
	switch n {
	case 0:
		return "no items"
	case 1:
		return "1 item"
	}
	return fmt.Sprintf("%d items", n)
}
