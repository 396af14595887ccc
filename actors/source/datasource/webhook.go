package datasource

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"mime"
	"strings"
)

// HookPrefix is where webhooks arrive on the daemon's HTTP port: a source
// named door of light kitchen receives POST /hooks/kitchen/door.
const HookPrefix = "/hooks/"

// Token limits: a token is compared by its SHA-256, so a short one could
// be guessed from a journal that leaked; it travels in a header, so it is
// printable ASCII without spaces.
const (
	MinTokenLen = 16
	MaxTokenLen = 256
)

// HookPath returns the path of a webhook source.
func HookPath(light, source string) string {
	return HookPrefix + light + "/" + source
}

// ParseHookPath splits /hooks/<light>/<source> into its names. ok is false
// for any other path; the names are not validated (an unknown light or
// source is a 404 either way).
func ParseHookPath(path string) (light, source string, ok bool) {
	rest, found := strings.CutPrefix(path, HookPrefix)
	if !found {
		return "", "", false
	}
	light, source, found = strings.Cut(rest, "/")
	if !found || light == "" || source == "" || strings.Contains(source, "/") {
		return "", "", false
	}
	return light, source, true
}

// HashToken is the form a webhook token is kept in: hex SHA-256.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TokenMatches reports whether token is the one def was defined with. A
// source without a token matches nothing: whether it needs one is the
// caller's decision (Authorized).
func TokenMatches(def Def, token string) bool {
	if def.TokenSHA256 == "" || token == "" {
		return false
	}
	got := HashToken(token)
	return subtle.ConstantTimeCompare([]byte(got), []byte(def.TokenSHA256)) == 1
}

// Authorized decides whether a webhook request may reach def. token is
// the token the request presents (empty: none); daemonAuth tells whether
// the daemon has credentials, and credsOK whether the request presented
// them. A source's token is enough for that source; otherwise the
// daemon's credentials are needed when it has some, and a daemon without
// any (on loopback only) lets through the sources without a token.
func Authorized(def Def, token string, daemonAuth, credsOK bool) bool {
	switch {
	case TokenMatches(def, token):
		return true
	case def.TokenSHA256 != "":
		return false
	case daemonAuth:
		return credsOK
	}
	return true
}

// HookResult returns the result a webhook's body stands for, as
// PushResult does for a NATS message, except that a body declared JSON
// (Content-Type application/json or …+json) must be valid JSON: a client
// that meant JSON and sent garbage hears so instead of storing text.
func HookResult(def Def, contentType string, body []byte) (json.RawMessage, error) {
	if isJSON(contentType) && len(body) <= MaxPushBytes && !json.Valid(body) {
		return nil, errorf(CodeInvalid, "source %q: the body is declared %s but is not valid JSON; send a JSON object like {\"who\":\"Ann\"}, or plain text", def.Name, contentType)
	}
	return PushResult(def, body)
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// CheckResult tells, before anything is queued, whether result has every
// path def stores, so that a webhook's sender hears at once that its body
// lacks one.
func CheckResult(def Def, result json.RawMessage) error {
	_, err := Values(def, result)
	return err
}

func checkToken(label, t string) error {
	if len(t) < MinTokenLen || len(t) > MaxTokenLen {
		return errorf(CodeInvalid, "%s: a token must be %d to %d characters, got %d; make a random one, e.g. with `openssl rand -hex 16`", label, MinTokenLen, MaxTokenLen, len(t))
	}
	for i := 0; i < len(t); i++ {
		if t[i] <= ' ' || t[i] > '~' {
			return errorf(CodeInvalid, "%s: a token must be printable ASCII without spaces (it travels in a header); make one with `openssl rand -hex 16`", label)
		}
	}
	return nil
}

func validHash(h string) bool {
	if len(h) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(h); i++ {
		if !isDigit(h[i]) && (h[i] < 'a' || h[i] > 'f') {
			return false
		}
	}
	return true
}
