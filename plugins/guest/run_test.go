package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// fakeHost answers fetch with body "hello" (or an error for a URL with
// "fail"), keeps log lines and says the time is 1000 ms.
type fakeHost struct{ logs []string }

func (h *fakeHost) Fetch(req []byte) []byte {
	var r fetchRequest
	_ = json.Unmarshal(req, &r)
	if strings.Contains(r.URL, "fail") {
		return []byte(`{"error":"refused"}`)
	}
	b, _ := json.Marshal(fetchResponse{Status: 200, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"m":"` + r.Method + `","u":"` + r.URL + `"}`})
	return b
}
func (h *fakeHost) Log(s string) { h.logs = append(h.logs, s) }
func (h *fakeHost) Now() int64   { return 1000 }

// The guest's logic runs on the host too (plain goja), so its cases are
// checked here fast; plugins' tests run the same through Wasmtime.
func TestRun(t *testing.T) {
	tests := []struct {
		name, code, params string
		want               string // the reply, as JSON
	}{
		{"sum", "return params.a + 1", `{"a":41}`, `{"ok":true,"result":42}`},
		{"await fetch", "const r = await fetch('https://x.test/p', {method: 'post'}); return {s: r.status, ok: r.ok, ct: r.headers['content-type'], j: await r.json()}", `{}`,
			`{"ok":true,"result":{"s":200,"ok":true,"ct":"application/json","j":{"m":"POST","u":"https://x.test/p"}}}`},
		{"then chain", "return Promise.resolve(2).then(x => x * 3)", `{}`, `{"ok":true,"result":6}`},
		{"now and Date", "return [now(), new Date().getTime()]", `{}`, `{"ok":true,"result":[1000,1000]}`},
		{"undefined dropped", "return {a: undefined, b: [undefined], c: new Date(0)}", `{}`, `{"ok":true,"result":{"b":[null],"c":"1970-01-01T00:00:00.000Z"}}`},
		{"fetch error", "\n  await fetch('https://fail.test/')", `{}`, `{"ok":false,"kind":"exception","error":"TypeError: fetch https://fail.test/: refused","line":2,"column":14}`},
		{"throw sync position", "let x = 1;\nthrow new Error('boom')", `{}`, `{"ok":false,"kind":"exception","error":"Error: boom","line":2,"column":7}`},
		{"throw after await", "await null;\n\n  null.x", `{}`, `{"ok":false,"kind":"exception","error":"TypeError: Cannot read property 'x' of undefined","line":3,"column":8}`},
		{"throw a string", "throw 'no'", `{}`, `{"ok":false,"kind":"exception","error":"no"}`},
		{"syntax", "let = ;", `{}`, `{"ok":false,"kind":"syntax","error":"SyntaxError: Unexpected token ;","line":1,"column":7}`},
		{"break out", "}); (function(){", `{}`, `{"ok":false,"kind":"syntax","error":"SyntaxError: the code closes a bracket it did not open"}`},
		{"undefined", "let a = 1", `{}`, `{"ok":false,"kind":"invalid_result","error":"the code returned nothing (undefined); end it with a return of a JSON value, e.g. return {temp: 21}"}`},
		{"function", "return {f() {}}", `{}`, `{"ok":false,"kind":"invalid_result","error":"result.f is a function, which JSON cannot hold; return data, not code (did you forget to call it?)"}`},
		{"cycle", "const a = {b: {}}; a.b.c = a; return a", `{}`, `{"ok":false,"kind":"invalid_result","error":"result.b.c refers back to result (a cycle), which JSON cannot hold"}`},
		{"NaN", "return [0/0]", `{}`, `{"ok":false,"kind":"invalid_result","error":"result[0] is NaN, which JSON cannot hold; return a finite number or null"}`},
		{"never settles", "await new Promise(() => {})", `{}`, `{"ok":false,"kind":"invalid_result","error":"the code awaited a promise that never settles; await only fetch(...) and promises that resolve"}`},
		{"recursion", "function f(n) { return f(n + 1) + 1 }\nreturn f(0)", `{}`, `{"ok":false,"kind":"exception","error":"RangeError: maximum call stack size exceeded","line":1,"column":25}`},
		{"no require", "return [typeof require, typeof process, typeof fs]", `{}`, `{"ok":true,"result":["undefined","undefined","undefined"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(run([]byte(`{"code":`+quote(tt.code)+`,"params":`+tt.params+`}`), &fakeHost{}))
			if got != tt.want {
				t.Errorf("run(%q)\n got %s\nwant %s", tt.code, got, tt.want)
			}
		})
	}
}

func TestLog(t *testing.T) {
	h := &fakeHost{}
	run([]byte(`{"code":"log('a', 1, {b: 2}); console.log([3]); return 0"}`), h)
	if got, want := strings.Join(h.logs, "|"), `a 1 {"b":2}|[3]`; got != want {
		t.Errorf("logs %q, want %q", got, want)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
