package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/internal/jsbox"
)

// The tool's source runs as the body of this async function: params is in
// scope, return gives the result, await is allowed. The head is one line,
// so a position in the wrapped source is one line below the user's.
const (
	srcName = "tool.js"
	head    = "(async function(params) {\n"
	tail    = "\n})"

	maxCallDepth = 10000 // JavaScript calls nested deeper throw a RangeError
	maxMsg       = 2000  // bytes of an error message
	maxDepth     = 256   // nesting of the result
)

// host is what the guest imports from the host: the wasm imports on
// wasip1, a fake in tests.
type host interface {
	// Fetch takes a request and returns a response, both JSON (see
	// plugins/README.md); a failed fetch is {"error": "..."}.
	Fetch(req []byte) []byte
	Log(line string)
	Now() int64 // Unix milliseconds
}

// call is what the host asks for.
type call struct {
	Code   string          `json:"code"`
	Params json.RawMessage `json:"params"`
	// MemoryLimit is the host's cap on linear memory, in bytes (0:
	// none); the guest's garbage collector works harder as it nears it.
	MemoryLimit int64 `json:"memory_limit"`
}

// reply is what the guest answers.
type reply struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Kind   string          `json:"kind,omitempty"` // syntax, exception, invalid_result, bad_call
	Error  string          `json:"error,omitempty"`
	Line   int             `json:"line,omitempty"`
	Column int             `json:"column,omitempty"`
}

type fetchRequest struct {
	URL     string            `json:"url"`
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

type fetchResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Error   string            `json:"error"`
}

// run runs one call, given as JSON, and returns the reply as JSON.
func run(in []byte, h host) []byte {
	out, err := json.Marshal(evaluate(in, h))
	if err != nil {
		out, _ = json.Marshal(reply{Kind: "bad_call", Error: "encoding the reply: " + err.Error()})
	}
	return out
}

func evaluate(in []byte, h host) reply {
	var c call
	if err := json.Unmarshal(in, &c); err != nil {
		return reply{Kind: "bad_call", Error: "the call is not JSON: " + err.Error()}
	}
	if len(c.Params) == 0 {
		c.Params = json.RawMessage("{}")
	}
	if c.MemoryLimit > 0 {
		debug.SetMemoryLimit(c.MemoryLimit - c.MemoryLimit/8)
	}

	src := head + c.Code + tail
	prog, err := jsbox.Parse(srcName, src)
	if err == nil && jsbox.Wrapped(prog) == nil {
		err = errors.New("the code closes a bracket it did not open")
	}
	var compiled *goja.Program
	if err == nil {
		compiled, err = goja.CompileAST(prog, false)
	}
	if err != nil {
		s := jsbox.ParseError(c.Code, err)
		r := reply{Kind: "syntax", Error: "SyntaxError: " + clip.To(s.Msg, maxMsg, "…"), Line: s.Line, Column: s.Col}
		if s.AtEnd {
			r.Error += " (at the end of the code: is a bracket left open?)"
		}
		return r
	}

	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallDepth)
	vm.SetTimeSource(func() time.Time { return time.UnixMilli(h.Now()) })
	install(vm, h)
	describe := func(v goja.Value) string {
		f, _ := goja.AssertFunction(vm.Get("String"))
		s, err := f(goja.Undefined(), v)
		if err != nil {
			return "a value that cannot be printed"
		}
		return s.String()
	}

	fnv, err := vm.RunProgram(compiled)
	if err != nil {
		return thrown(vm, err, describe)
	}
	fn, _ := goja.AssertFunction(fnv)
	parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	params, err := parse(goja.Undefined(), vm.ToValue(string(c.Params)))
	if err != nil {
		return reply{Kind: "bad_call", Error: "the params are not JSON"}
	}
	// The job queue (await, then) runs before the outermost call returns;
	// fetch answers synchronously, so the promise is settled by then
	// unless the code awaits something that never settles.
	v, err := fn(goja.Undefined(), params)
	if err != nil {
		return thrown(vm, err, describe)
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return reply{Kind: "bad_call", Error: "the wrapper did not return a promise"}
	}
	switch p.State() {
	case goja.PromiseStateRejected:
		return rejected(p.Result(), describe)
	case goja.PromiseStatePending:
		return reply{Kind: "invalid_result", Error: "the code awaited a promise that never settles; await only fetch(...) and promises that resolve"}
	}
	out, err := encode(vm, p.Result())
	if err != nil {
		var re replyError
		if errors.As(err, &re) {
			return re.r
		}
		return reply{Kind: "invalid_result", Error: clip.To(err.Error(), maxMsg, "…")}
	}
	return reply{OK: true, Result: out}
}

// replyError carries a reply that is not about the result's shape (a
// getter that threw) out of encode.
type replyError struct{ r reply }

func (e replyError) Error() string { return e.r.Error }

// thrown describes an error returned by goja: a synchronous throw, a
// stack overflow.
func thrown(vm *goja.Runtime, err error, describe func(goja.Value) string) reply {
	f := jsbox.Explain(err, func(_ goja.Value, args ...goja.Value) (goja.Value, error) {
		return vm.ToValue(describe(args[0])), nil
	}, maxMsg, srcName)
	return reply{Kind: "exception", Error: f.Msg, Line: f.Line, Column: f.Col}
}

// atTool finds the first frame in tool.js in an Error's stack text, as goja
// writes it: "\tat name (tool.js:3:7(12))" or "\tat tool.js:3:7(12)".
var atTool = regexp.MustCompile(regexp.QuoteMeta(srcName) + `:(\d+):(\d+)`)

// rejected describes the reason an async function's promise was rejected
// for: what it threw, with the position from the Error's stack.
func rejected(reason goja.Value, describe func(goja.Value) string) reply {
	r := reply{Kind: "exception", Error: clip.To(describe(reason), maxMsg, "…")}
	if o, ok := reason.(*goja.Object); ok {
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
			if m := atTool.FindStringSubmatch(st.String()); m != nil {
				line, _ := strconv.Atoi(m[1])
				col, _ := strconv.Atoi(m[2])
				if line > 1 {
					r.Line, r.Column = line-1, col
				}
			}
		}
	}
	return r
}

// install gives the runtime the host functions: fetch, log (also as
// console.log and friends) and now.
func install(vm *goja.Runtime, h host) {
	must := func(err error) {
		if err != nil {
			panic("guest: setting up JavaScript: " + err.Error())
		}
	}
	logf := func(c goja.FunctionCall) goja.Value {
		parts := make([]string, len(c.Arguments))
		for i, a := range c.Arguments {
			parts[i] = logText(vm, a)
		}
		h.Log(strings.Join(parts, " "))
		return goja.Undefined()
	}
	must(vm.Set("log", logf))
	console := vm.NewObject()
	for _, n := range []string{"log", "info", "warn", "error", "debug"} {
		must(console.Set(n, logf))
	}
	must(vm.Set("console", console))
	must(vm.Set("now", func(goja.FunctionCall) goja.Value { return vm.ToValue(h.Now()) }))
	must(vm.Set("fetch", func(c goja.FunctionCall) goja.Value {
		p, resolve, reject := vm.NewPromise()
		resp, err := doFetch(vm, h, c)
		if err != nil {
			_ = reject(vm.NewTypeError("%s", err.Error()))
		} else {
			_ = resolve(resp)
		}
		return vm.ToValue(p)
	}))
}

// doFetch turns fetch(url, {method, headers, body}) into a request to the
// host and its answer into {status, ok, headers, body, text(), json()}.
func doFetch(vm *goja.Runtime, h host, c goja.FunctionCall) (goja.Value, error) {
	req := fetchRequest{URL: c.Argument(0).String(), Method: "GET"}
	if opts, ok := c.Argument(1).(*goja.Object); ok {
		if m := opts.Get("method"); m != nil && !goja.IsUndefined(m) {
			req.Method = strings.ToUpper(m.String())
		}
		if hs, ok := opts.Get("headers").(*goja.Object); ok {
			req.Headers = map[string]string{}
			for _, k := range hs.Keys() {
				req.Headers[k] = hs.Get(k).String()
			}
		}
		if b := opts.Get("body"); b != nil && !goja.IsUndefined(b) && !goja.IsNull(b) {
			req.Body = b.String()
		}
	}
	in, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %v", req.URL, err)
	}
	var resp fetchResponse
	if err := json.Unmarshal(h.Fetch(in), &resp); err != nil {
		return nil, fmt.Errorf("fetch %s: the host's answer is not JSON", req.URL)
	}
	if resp.Error != "" {
		return nil, fmt.Errorf("fetch %s: %s", req.URL, resp.Error)
	}
	o := vm.NewObject()
	_ = o.Set("status", resp.Status)
	_ = o.Set("ok", resp.Status >= 200 && resp.Status < 300)
	headers := vm.NewObject()
	for k, v := range resp.Headers {
		_ = headers.Set(strings.ToLower(k), v)
	}
	_ = o.Set("headers", headers)
	_ = o.Set("body", resp.Body)
	_ = o.Set("text", func(goja.FunctionCall) goja.Value {
		p, resolve, _ := vm.NewPromise()
		_ = resolve(resp.Body)
		return vm.ToValue(p)
	})
	_ = o.Set("json", func(goja.FunctionCall) goja.Value {
		p, resolve, reject := vm.NewPromise()
		parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
		v, err := parse(goja.Undefined(), vm.ToValue(resp.Body))
		if err != nil {
			_ = reject(vm.NewTypeError("fetch %s: the body is not JSON", req.URL))
		} else {
			_ = resolve(v)
		}
		return vm.ToValue(p)
	})
	return o, nil
}

// logText prints one argument of log: strings as they are, other values as
// JSON when they have a JSON form, else as String() does.
func logText(vm *goja.Runtime, v goja.Value) string {
	if s, ok := v.Export().(string); ok {
		return s
	}
	if o, ok := v.(*goja.Object); ok {
		if _, isFn := goja.AssertFunction(o); !isFn {
			if b, err := encode(vm, o); err == nil {
				return string(b)
			}
		}
	}
	return v.String()
}

// encode turns the code's result into JSON, refusing what JSON cannot
// say: undefined (at the top), functions, symbols, BigInts, NaN and the
// infinities, cycles, nesting deeper than maxDepth. Properties whose value
// is undefined are left out, as JSON.stringify does.
func encode(vm *goja.Runtime, v goja.Value) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			// A getter or toJSON threw.
			if ex, ok := p.(*goja.Exception); ok {
				err = replyError{reply{Kind: "exception", Error: clip.To(ex.Error(), maxMsg, "…")}}
				return
			}
			panic(p)
		}
	}()
	if v == nil || goja.IsUndefined(v) {
		return nil, errors.New("the code returned nothing (undefined); end it with a return of a JSON value, e.g. return {temp: 21}")
	}
	e := encoder{vm: vm}
	if err := e.value(v, "result", 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type encoder struct {
	vm    *goja.Runtime
	buf   []byte
	path  []*goja.Object // the objects being encoded, outermost first
	names []string       // their paths
}

func (e *encoder) value(v goja.Value, at string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%s is nested more than %d deep; return a flatter value", at, maxDepth)
	}
	switch {
	case v == nil || goja.IsUndefined(v) || goja.IsNull(v):
		e.buf = append(e.buf, "null"...)
		return nil
	}
	switch x := v.Export().(type) {
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
		return nil
	case string:
		return e.str(x)
	case int64:
		e.buf = strconv.AppendInt(e.buf, x, 10)
		return nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s is %v, which JSON cannot hold; return a finite number or null", at, v)
		}
		b, _ := json.Marshal(x)
		e.buf = append(e.buf, b...)
		return nil
	}
	o, ok := v.(*goja.Object)
	if !ok {
		kind := "symbol"
		if _, big := v.Export().(*big.Int); big {
			kind = "BigInt"
		}
		return fmt.Errorf("%s is a %s, which JSON cannot hold; return strings, numbers, booleans, null, arrays and plain objects", at, kind)
	}
	if _, isFn := goja.AssertFunction(o); isFn {
		return fmt.Errorf("%s is a function, which JSON cannot hold; return data, not code (did you forget to call it?)", at)
	}
	for i, p := range e.path {
		if p == o {
			return fmt.Errorf("%s refers back to %s (a cycle), which JSON cannot hold", at, e.names[i])
		}
	}
	if toJSON, ok := goja.AssertFunction(o.Get("toJSON")); ok {
		// A Date, or an object that says how it is written.
		j, err := toJSON(o, e.vm.ToValue(at))
		if err != nil {
			return err
		}
		if j != nil && !goja.IsUndefined(j) {
			if jo, ok := j.(*goja.Object); !ok || jo != o {
				return e.value(j, at, depth+1)
			}
		}
	}
	e.path, e.names = append(e.path, o), append(e.names, at)
	defer func() { e.path, e.names = e.path[:len(e.path)-1], e.names[:len(e.names)-1] }()
	if o.ClassName() == "Array" {
		n := o.Get("length").ToInteger()
		e.buf = append(e.buf, '[')
		for i := int64(0); i < n; i++ {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(o.Get(strconv.FormatInt(i, 10)), fmt.Sprintf("%s[%d]", at, i), depth+1); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
		return nil
	}
	e.buf = append(e.buf, '{')
	first := true
	for _, k := range o.Keys() {
		pv := o.Get(k)
		if pv == nil || goja.IsUndefined(pv) {
			continue
		}
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		if err := e.str(k); err != nil {
			return err
		}
		e.buf = append(e.buf, ':')
		if err := e.value(pv, at+"."+k, depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

func (e *encoder) str(s string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	e.buf = append(e.buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
	return nil
}
