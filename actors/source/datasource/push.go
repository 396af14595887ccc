package datasource

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// MaxPushBytes bounds a pushed message: its values go into the light's
// variables and the journal, which are not a place for blobs.
const MaxPushBytes = 64 << 10

// PushResult returns the result a pushed message stands for: the payload
// itself when it is JSON ({"who":"Ann"} → result.who), else the payload as
// text, {"text": "…"} (result.text). A message larger than MaxPushBytes,
// or text that is not UTF-8, is refused with a sentence that says so.
func PushResult(def Def, payload []byte) (json.RawMessage, error) {
	if len(payload) > MaxPushBytes {
		return nil, errorf(CodeBadResult, "source %q: a message of %d bytes is larger than %d; publish a smaller JSON object with only the values to store", def.Name, len(payload), MaxPushBytes)
	}
	trimmed := bytes.TrimSpace(payload)
	if len(trimmed) > 0 && json.Valid(trimmed) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, trimmed); err == nil {
			return buf.Bytes(), nil
		}
	}
	if !utf8.Valid(payload) {
		return nil, errorf(CodeBadResult, "source %q: the message is neither JSON nor UTF-8 text; publish JSON, e.g. {\"who\":\"Ann\"}", def.Name)
	}
	return json.Marshal(map[string]string{"text": string(payload)})
}
