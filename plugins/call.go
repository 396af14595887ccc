package plugins

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/internal/clock"
)

// Request is one call: the tool's code, its params (a JSON object; {}
// when empty) and the Fetcher its fetch goes through (nil: fetch fails).
type Request struct {
	Code   string
	Params json.RawMessage
	Fetch  Fetcher
}

// Result is a call's outcome: the JSON value the code returned, and what
// it logged (log(...), then anything the guest wrote to stdout or
// stderr), also when the call failed.
type Result struct {
	Value    json.RawMessage
	Log      []string
	Duration time.Duration
}

// Call runs code with params in a fresh instance and returns its JSON
// result. Failures are *Error (errors.Is with ErrTimeout and the others),
// or the ctx's error when it ended before the call started.
func (e *Engine) Call(ctx context.Context, code string, params json.RawMessage, fetch Fetcher) (json.RawMessage, error) {
	r, err := e.Run(ctx, Request{Code: code, Params: params, Fetch: fetch})
	return r.Value, err
}

// state is one call's, reached by the host functions through the store.
type state struct {
	ctx       context.Context
	clock     clock.Clock
	fetch     Fetcher
	call      []byte
	pending   []byte // the answer to the last fetch, until fetch_read
	result    []byte
	gotResult bool
	fault     error // a host-side failure that explains the trap it causes
	maxResult int
	log       logBuf
	stdout    []byte
	stderr    []byte
}

// Run is Call with the log and the duration. It first waits for the
// guest to be loaded (see Start), as long as the ctx allows, and fails
// with Err if it could not be. The call ends at its deadline
// (Config.Timeout, or the ctx's if sooner); cancelling the ctx ends a
// fetch in progress, and the code's computing at the deadline.
func (e *Engine) Run(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := e.wait(ctx); err != nil {
		return Result{}, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return Result{}, ErrClosed
	}
	start := time.Now()
	timeout := e.cfg.Timeout
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = time.Until(d)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	params := req.Params
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage("{}")
	}
	call, err := json.Marshal(struct {
		Code        string          `json:"code"`
		Params      json.RawMessage `json:"params"`
		MemoryLimit int64           `json:"memory_limit"`
	}{req.Code, params, e.cfg.MemoryLimit})
	if err != nil {
		return Result{}, fmt.Errorf("plugins: the params are not JSON: %w", err)
	}
	st := &state{ctx: ctx, clock: e.cfg.Clock, fetch: req.Fetch, call: call, maxResult: e.cfg.MaxResult, log: logBuf{max: e.cfg.MaxLog}}
	runErr := e.run(st, timeout)
	res := Result{Log: st.logs(), Duration: time.Since(start)}
	if err := e.outcome(st, runErr, timeout); err != nil {
		return res, err
	}
	res.Value = st.result
	return res, nil
}

// run instantiates the guest in a fresh store and runs it to its end.
func (e *Engine) run(st *state, timeout time.Duration) error {
	store, inst, err := e.instantiate(st, timeout)
	if store != nil {
		defer store.Close()
	}
	if err != nil {
		return err
	}
	start := inst.GetFunc(store, "_start")
	if start == nil {
		return &Error{Code: CodeTrap, Message: "the guest has no _start: build it as a WASI command"}
	}
	_, err = start.Call(store)
	return err
}

// instantiate makes the call's store, with its limits, and the guest's
// instance in it. The caller closes the store.
func (e *Engine) instantiate(st *state, timeout time.Duration) (*wasmtime.Store, *wasmtime.Instance, error) {
	store := wasmtime.NewStoreWithData(e.engine, st)
	store.Limiter(e.cfg.MemoryLimit, -1, -1, -1, -1)
	// No args, no environment, no preopened directories; stdout and
	// stderr are caught by the host's fd_write.
	store.SetWasi(wasmtime.NewWasiConfig())
	ticks := uint64((timeout + e.cfg.Tick - 1) / e.cfg.Tick)
	store.SetEpochDeadline(max(ticks, 1))
	inst, err := e.linker.Instantiate(store, e.module)
	return store, inst, err
}

// outcome turns how the guest ended and what it answered into the call's
// error.
func (e *Engine) outcome(st *state, err error, timeout time.Duration) error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	if st.fault != nil {
		return st.fault
	}
	var trap *wasmtime.Trap
	var werr *wasmtime.Error
	switch {
	case err == nil:
	case errors.As(err, &trap):
		if c := trap.Code(); c != nil && *c == wasmtime.Interrupt {
			return &Error{Code: CodeTimeout, Message: fmt.Sprintf("the code ran longer than %v; make it do less (no endless loops), or fetch less", timeout.Round(time.Millisecond))}
		}
		if c := trap.Code(); c != nil && *c == wasmtime.StackOverflow {
			return &Error{Code: CodeTrap, Message: "the guest overflowed its wasm stack; recurse less deeply"}
		}
		return &Error{Code: CodeTrap, Message: "the guest crashed: " + firstLine(trap.Message()) + st.stderrHead()}
	case errors.As(err, &werr):
		status, exited := werr.ExitStatus()
		switch {
		case exited && status == 0:
		case exited && bytes.Contains(st.stderr, []byte("out of memory")):
			return &Error{Code: CodeOutOfMemory, Message: fmt.Sprintf("the code needed more than %d MiB of memory; keep less data (strings, arrays) at once", e.cfg.MemoryLimit>>20)}
		case exited:
			return &Error{Code: CodeTrap, Message: fmt.Sprintf("the guest exited with status %d", status) + st.stderrHead()}
		case strings.Contains(werr.Error(), "memory") && strings.Contains(werr.Error(), "limit"):
			return &Error{Code: CodeOutOfMemory, Message: fmt.Sprintf("the guest needs more than %d MiB of memory to start", e.cfg.MemoryLimit>>20)}
		default:
			return &Error{Code: CodeTrap, Message: firstLine(werr.Error())}
		}
	default:
		return &Error{Code: CodeTrap, Message: err.Error()}
	}
	if !st.gotResult {
		return &Error{Code: CodeTrap, Message: "the guest ended without a result" + st.stderrHead()}
	}
	var rep struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Kind   string          `json:"kind"`
		Error  string          `json:"error"`
		Line   int             `json:"line"`
		Column int             `json:"column"`
	}
	if err := json.Unmarshal(st.result, &rep); err != nil {
		return &Error{Code: CodeTrap, Message: "the guest's reply is not JSON: " + err.Error()}
	}
	if rep.OK {
		if !json.Valid(rep.Result) {
			return &Error{Code: CodeInvalidResult, Message: "the guest returned a result that is not JSON"}
		}
		st.result = rep.Result
		return nil
	}
	code := CodeTrap
	switch rep.Kind {
	case "syntax":
		code = CodeSyntax
	case "exception":
		code = CodeException
	case "invalid_result":
		code = CodeInvalidResult
	}
	return &Error{Code: code, Message: rep.Error, Line: rep.Line, Column: rep.Column}
}

// stderrHead gives the start of the guest's stderr (a Go guest's panic,
// a runtime's fatal error) to add to a crash's message.
func (st *state) stderrHead() string {
	s := strings.TrimSpace(string(st.stderr))
	if s == "" {
		return ""
	}
	return " (stderr: " + clip.To(s, 300, "…") + ")"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// logs returns the call's log: its log lines, then stdout and stderr.
func (st *state) logs() []string {
	for _, o := range []struct {
		name string
		b    []byte
	}{{"stdout", st.stdout}, {"stderr", st.stderr}} {
		for line := range strings.Lines(string(o.b)) {
			if line = strings.TrimRight(line, "\n"); line != "" {
				st.log.add(o.name + ": " + line)
			}
		}
	}
	return st.log.lines
}

// logBuf keeps lines up to max bytes, then notes that it dropped some.
type logBuf struct {
	max, size int
	lines     []string
	dropped   bool
}

func (l *logBuf) add(line string) {
	if l.dropped {
		return
	}
	if l.size+len(line) > l.max {
		l.dropped = true
		l.lines = append(l.lines, fmt.Sprintf("… (log cut at %d bytes)", l.max))
		return
	}
	l.size += len(line)
	l.lines = append(l.lines, line)
}

// The host functions. A guest that passes memory out of its bounds traps.

func newLinker(engine *wasmtime.Engine) (*wasmtime.Linker, error) {
	l := wasmtime.NewLinker(engine)
	if err := l.DefineWasi(); err != nil {
		return nil, fmt.Errorf("plugins: linking WASI: %w", err)
	}
	l.AllowShadowing(true)
	defs := []struct {
		name string
		fn   any
	}{
		{"call_len", callLen},
		{"call_read", callRead},
		{"result", result},
		{"fetch", fetch},
		{"fetch_read", fetchRead},
		{"log", logLine},
		{"now", now},
	}
	for _, d := range defs {
		if err := l.FuncWrap("lumen", d.name, d.fn); err != nil {
			return nil, fmt.Errorf("plugins: linking lumen.%s: %w", d.name, err)
		}
	}
	// stdout and stderr go to the call's log rather than to a file.
	if err := l.FuncWrap("wasi_snapshot_preview1", "fd_write", fdWrite); err != nil {
		return nil, fmt.Errorf("plugins: linking fd_write: %w", err)
	}
	return l, nil
}

func stateOf(c *wasmtime.Caller) *state { return c.Data().(*state) }

// mem returns n bytes of the caller's memory at p, or a trap.
func mem(c *wasmtime.Caller, p, n int32) ([]byte, *wasmtime.Trap) {
	ext := c.GetExport("memory")
	if ext == nil || ext.Memory() == nil {
		return nil, wasmtime.NewTrap("lumen: the guest exports no memory")
	}
	data := ext.Memory().UnsafeData(c)
	start, end := int64(uint32(p)), int64(uint32(p))+int64(uint32(n))
	if end > int64(len(data)) {
		return nil, wasmtime.NewTrap("lumen: the guest passed memory out of its bounds")
	}
	return data[start:end:end], nil
}

func callLen(c *wasmtime.Caller) int32 { return int32(len(stateOf(c).call)) }

func callRead(c *wasmtime.Caller, p int32) *wasmtime.Trap {
	st := stateOf(c)
	b, trap := mem(c, p, int32(len(st.call)))
	if trap != nil {
		return trap
	}
	copy(b, st.call)
	return nil
}

func result(c *wasmtime.Caller, p, n int32) *wasmtime.Trap {
	st := stateOf(c)
	b, trap := mem(c, p, n)
	if trap != nil {
		return trap
	}
	if st.gotResult {
		st.fault = &Error{Code: CodeTrap, Message: "the guest gave two results"}
		return wasmtime.NewTrap("lumen: result called twice")
	}
	st.gotResult = true
	if len(b) > st.maxResult+64 { // the reply's envelope around the result
		st.fault = &Error{Code: CodeInvalidResult, Message: fmt.Sprintf("the result is %d bytes, more than %d; return less", len(b), st.maxResult)}
		return nil
	}
	st.result = bytes.Clone(b)
	return nil
}

func fetch(c *wasmtime.Caller, p, n int32) (int32, *wasmtime.Trap) {
	st := stateOf(c)
	b, trap := mem(c, p, n)
	if trap != nil {
		return 0, trap
	}
	var req FetchRequest
	var answer any
	switch err := json.Unmarshal(b, &req); {
	case err != nil:
		answer = map[string]string{"error": "the request is not JSON: " + err.Error()}
	case st.fetch == nil:
		answer = map[string]string{"error": "fetch is not available here"}
	default:
		if req.Method == "" {
			req.Method = "GET"
		}
		resp, err := st.fetch.Fetch(st.ctx, req)
		if err != nil {
			answer = map[string]string{"error": err.Error()}
		} else {
			answer = resp
		}
	}
	out, err := json.Marshal(answer)
	if err != nil {
		out, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	st.pending = out
	return int32(len(out)), nil
}

func fetchRead(c *wasmtime.Caller, p int32) *wasmtime.Trap {
	st := stateOf(c)
	b, trap := mem(c, p, int32(len(st.pending)))
	if trap != nil {
		return trap
	}
	copy(b, st.pending)
	st.pending = nil
	return nil
}

func logLine(c *wasmtime.Caller, p, n int32) *wasmtime.Trap {
	b, trap := mem(c, p, n)
	if trap != nil {
		return trap
	}
	stateOf(c).log.add(string(b))
	return nil
}

func now(c *wasmtime.Caller) int64 { return stateOf(c).clock.Now().UnixMilli() }

// WASI errno values fd_write answers with.
const (
	errnoSuccess = 0
	errnoBadf    = 8
	errnoFault   = 21
)

// fdWrite is WASI's fd_write for stdout and stderr only, kept (up to the
// log's cap) in the call's state.
func fdWrite(c *wasmtime.Caller, fd, iovs, iovsLen, nwritten int32) int32 {
	st := stateOf(c)
	var dst *[]byte
	switch fd {
	case 1:
		dst = &st.stdout
	case 2:
		dst = &st.stderr
	default:
		return errnoBadf
	}
	vec, trap := mem(c, iovs, iovsLen*8)
	if trap != nil || iovsLen < 0 {
		return errnoFault
	}
	total := uint32(0)
	for i := range int(iovsLen) {
		p := binary.LittleEndian.Uint32(vec[i*8:])
		n := binary.LittleEndian.Uint32(vec[i*8+4:])
		b, trap := mem(c, int32(p), int32(n))
		if trap != nil {
			return errnoFault
		}
		if room := st.log.max - len(*dst); room > 0 {
			*dst = append(*dst, b[:min(len(b), room)]...)
		}
		total += n
	}
	out, trap := mem(c, nwritten, 4)
	if trap != nil {
		return errnoFault
	}
	binary.LittleEndian.PutUint32(out, total)
	return errnoSuccess
}
