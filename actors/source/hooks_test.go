package source_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors/source"
	"github.com/lumen-home/lumen/actors/source/datasource"
)

// The HTTP side of webhooks, against a stand-in for a light's source
// manager that records what it is asked and answers 202: routing, method,
// size, credentials and the reply's shape. What the manager decides is
// tested end to end (cmd/lumen).
func TestHooksHTTP(t *testing.T) {
	sys := actor.NewActorSystem()
	got := make(chan *source.Hook, 1)
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if h, ok := ctx.Message().(*source.Hook); ok {
			got <- h
			if h.Source == "mute" {
				return // never answers
			}
			ctx.Respond(&source.HookReply{Code: http.StatusAccepted, Queued: 1})
		}
	}))
	hooks := source.NewHooks(sys.Root, "ann", "secret")
	hooks.Timeout = 300 * time.Millisecond
	hooks.Add("kitchen", pid, nil)
	srv := httptest.NewServer(hooks)
	defer srv.Close()

	type req struct {
		method, path, body string
		header             map[string]string
		basic, chunked     bool // chunked: no Content-Length
	}
	tests := []struct {
		name string
		req  req
		code int
		want string // in the body
		hook func(t *testing.T, h *source.Hook)
	}{
		{"accepted", req{method: "POST", path: "/hooks/kitchen/door", body: `{"who":"Ann"}`, header: map[string]string{"Content-Type": "application/json"}}, 202, `"ok":true`,
			func(t *testing.T, h *source.Hook) {
				if h.Source != "door" || string(h.Body) != `{"who":"Ann"}` || h.ContentType != "application/json" || !h.DaemonAuth || h.CredsOK || h.Token != "" {
					t.Fatalf("hook %+v", h)
				}
			}},
		{"basic auth", req{method: "POST", path: "/hooks/kitchen/door", body: "x", basic: true}, 202, `"queued":1`,
			func(t *testing.T, h *source.Hook) {
				if !h.CredsOK {
					t.Fatal("credentials not recognized")
				}
			}},
		{"bearer token", req{method: "POST", path: "/hooks/kitchen/door", header: map[string]string{"Authorization": "Bearer tok-1"}}, 202, "",
			func(t *testing.T, h *source.Hook) {
				if h.Token != "tok-1" {
					t.Fatalf("token %q", h.Token)
				}
			}},
		{"bearer in any case", req{method: "POST", path: "/hooks/kitchen/door", header: map[string]string{"Authorization": "bearer  tok-3"}}, 202, "",
			func(t *testing.T, h *source.Hook) {
				if h.Token != "tok-3" {
					t.Fatalf("token %q", h.Token)
				}
			}},
		{"another scheme", req{method: "POST", path: "/hooks/kitchen/door", header: map[string]string{"Authorization": "Basic tok-4"}}, 202, "",
			func(t *testing.T, h *source.Hook) {
				if h.Token != "" {
					t.Fatalf("token %q from a Basic header", h.Token)
				}
			}},
		{"token header", req{method: "POST", path: "/hooks/kitchen/door", header: map[string]string{"X-Lumen-Token": "tok-2"}}, 202, "",
			func(t *testing.T, h *source.Hook) {
				if h.Token != "tok-2" {
					t.Fatalf("token %q", h.Token)
				}
			}},
		{"unknown light", req{method: "POST", path: "/hooks/hall/door"}, 404, "no light hall", nil},
		{"bad path", req{method: "POST", path: "/hooks/kitchen"}, 404, "/hooks/LIGHT/SOURCE", nil},
		{"GET", req{method: "GET", path: "/hooks/kitchen/door"}, 405, "POST", nil},
		{"too large", req{method: "POST", path: "/hooks/kitchen/door", body: strings.Repeat("x", datasource.MaxPushBytes+1)}, 413, "larger than 65536", nil},
		{"too large, chunked", req{method: "POST", path: "/hooks/kitchen/door", body: strings.Repeat("x", datasource.MaxPushBytes+1), chunked: true}, 413, "larger than 65536", nil},
		{"no answer", req{method: "POST", path: "/hooks/kitchen/mute"}, 503, "did not answer", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in io.Reader = strings.NewReader(tt.req.body)
			if tt.req.chunked {
				in = io.MultiReader(in) // hides the length
			}
			r, err := http.NewRequest(tt.req.method, srv.URL+tt.req.path, in)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.req.header {
				r.Header.Set(k, v)
			}
			if tt.req.basic {
				r.SetBasicAuth("ann", "secret")
			}
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tt.code || !strings.Contains(string(b), tt.want) {
				t.Fatalf("%d %s, want %d containing %q", res.StatusCode, b, tt.code, tt.want)
			}
			var body struct {
				OK   bool `json:"ok"`
				Code int  `json:"code"`
			}
			if err := json.Unmarshal(b, &body); err != nil || body.OK != (tt.code < 300) || (!body.OK && body.Code != tt.code) {
				t.Fatalf("body %s: %v", b, err)
			}
			select {
			case h := <-got:
				if tt.hook != nil {
					tt.hook(t, h)
				}
			case <-time.After(100 * time.Millisecond):
				if tt.hook != nil {
					t.Fatal("the manager was not asked")
				}
			}
		})
	}
}
