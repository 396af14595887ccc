package datasource_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

const hookToken = "0123456789abcdef0123"

func TestParseHookPath(t *testing.T) {
	tests := []struct {
		path          string
		light, source string
		ok            bool
	}{
		{"/hooks/kitchen/door", "kitchen", "door", true},
		{"/hooks/kitchen/door/", "", "", false},
		{"/hooks/kitchen/door/x", "", "", false},
		{"/hooks/kitchen", "", "", false},
		{"/hooks//door", "", "", false},
		{"/hooks/kitchen/", "", "", false},
		{"/other/kitchen/door", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			l, s, ok := datasource.ParseHookPath(tt.path)
			if l != tt.light || s != tt.source || ok != tt.ok {
				t.Fatalf("ParseHookPath(%q) = %q %q %v, want %q %q %v", tt.path, l, s, ok, tt.light, tt.source, tt.ok)
			}
		})
	}
	if p := datasource.HookPath("kitchen", "door"); p != "/hooks/kitchen/door" {
		t.Fatalf("HookPath = %q", p)
	}
}

// A token given at definition is kept only as its hash: the canonical
// JSON (what is journaled, listed and shown to the agent) never has it.
func TestWebhookTokenIsHashed(t *testing.T) {
	d, err := datasource.Decode([]byte(`{"name":"door","type":"webhook","token":"` + hookToken + `","fires":"doorbell"}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.TokenSHA256 != datasource.HashToken(hookToken) {
		t.Fatalf("token_sha256 %q", d.TokenSHA256)
	}
	b, _ := json.Marshal(d)
	if strings.Contains(string(b), hookToken) || !strings.Contains(string(b), `"token_sha256":"`+d.TokenSHA256+`"`) {
		t.Fatalf("canonical JSON %s", b)
	}
	// The journaled form reads back the same (replay).
	again, err := datasource.Decode(b)
	if err != nil || again.TokenSHA256 != d.TokenSHA256 {
		t.Fatalf("round trip: %+v %v", again, err)
	}
}

func TestWebhookDefErrors(t *testing.T) {
	tests := []struct{ name, given, want string }{
		{"short token", `{"name":"d","type":"webhook","token":"abc","fires":"x"}`, "a token must be 16 to 256 characters, got 3"},
		{"token with a space", `{"name":"d","type":"webhook","token":"0123456789 abcdef","fires":"x"}`, "printable ASCII without spaces"},
		{"token and hash", `{"name":"d","type":"webhook","token":"` + hookToken + `","token_sha256":"ab","fires":"x"}`, "not both"},
		{"bad hash", `{"name":"d","type":"webhook","token_sha256":"xyz","fires":"x"}`, "64 lowercase hex digits"},
		{"token on nats", `{"name":"d","type":"nats","subject":"home.x","token":"` + hookToken + `","fires":"x"}`, "token is only for webhook sources"},
		{"webhook doing nothing", `{"name":"d","type":"webhook"}`, "a webhook source needs fires"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := datasource.Decode([]byte(tt.given))
			if err == nil || !errors.Is(err, datasource.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want a 400 containing %q", err, tt.want)
			}
		})
	}
}

func TestAuthorized(t *testing.T) {
	open := datasource.Def{Name: "door", Type: datasource.TypeWebhook}
	locked := datasource.Def{Name: "door", Type: datasource.TypeWebhook, TokenSHA256: datasource.HashToken(hookToken)}
	tests := []struct {
		name                string
		def                 datasource.Def
		token               string
		daemonAuth, credsOK bool
		want                bool
	}{
		{"open source, daemon without credentials", open, "", false, false, true},
		{"open source, daemon credentials given", open, "", true, true, true},
		{"open source, daemon credentials missing", open, "", true, false, false},
		{"token source, right token", locked, hookToken, false, false, true},
		{"token source, right token, no credentials", locked, hookToken, true, false, true},
		{"token source, wrong token", locked, hookToken + "x", false, false, false},
		{"token source, no token", locked, "", false, false, false},
		{"token source, credentials are not its token", locked, "", true, true, false},
		{"a token on an open source is not credentials", open, hookToken, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := datasource.Authorized(tt.def, tt.token, tt.daemonAuth, tt.credsOK); got != tt.want {
				t.Fatalf("Authorized = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHookResult(t *testing.T) {
	door := datasource.Def{Name: "door", Type: datasource.TypeWebhook, Store: map[string]string{"who": "result.who"}, Fires: "doorbell"}
	tests := []struct {
		name, contentType, body string
		want                    string // the result, or the error's text
		code                    int    // 0: no error
	}{
		{"JSON", "application/json", `{"who": "Ann"}`, `{"who":"Ann"}`, 0},
		{"JSON with charset", "application/json; charset=utf-8", `{"who":"Ann"}`, `{"who":"Ann"}`, 0},
		{"JSON without a content type", "", `{"who":"Ann"}`, `{"who":"Ann"}`, 0},
		{"text", "text/plain", "ding dong", `{"text":"ding dong"}`, 0},
		{"declared JSON but broken", "application/json", `{"who":`, "not valid JSON", 400},
		{"vendor JSON broken", "application/vnd.x+json", `nope`, "not valid JSON", 400},
		{"not UTF-8", "application/octet-stream", "\xff\xfe", "neither JSON nor UTF-8", 502},
		{"too large", "application/json", `"` + strings.Repeat("x", datasource.MaxPushBytes) + `"`, "larger than 65536", 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := datasource.HookResult(door, tt.contentType, []byte(tt.body))
			if tt.code != 0 {
				var e *datasource.Error
				if !errors.As(err, &e) || e.Code != tt.code || !strings.Contains(e.Msg, tt.want) {
					t.Fatalf("got %v, want %d containing %q", err, tt.code, tt.want)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s %v, want %s", got, err, tt.want)
			}
		})
	}
	if err := datasource.CheckResult(door, json.RawMessage(`{"text":"ding"}`)); err == nil || !strings.Contains(err.Error(), "could not store who") {
		t.Fatalf("CheckResult of a body without who: %v", err)
	}
	if err := datasource.CheckResult(door, json.RawMessage(`{"who":"Ann"}`)); err != nil {
		t.Fatalf("CheckResult: %v", err)
	}
}
