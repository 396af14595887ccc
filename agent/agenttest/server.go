// Package agenttest is a scripted OpenAI-compatible HTTP server: the fake
// at the one true edge of the agent, the language model's answers. The
// agent under test talks to it with the real openai-go client over real
// HTTP, in the real wire format (streamed when asked), and the server
// records what it was sent so tests can check the conversation.
package agenttest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/lumen-home/lumen/agent/mic"
)

// Call is one function call of a scripted reply.
type Call struct {
	Name string
	Args string // raw argument text, valid JSON or not
	ID   string // default call_<request>_<index>; set it to mimic servers that reuse ids
}

// Step is one scripted reply. Exactly one of its behaviours applies, in
// this order: Status (an HTTP error), Hang (never answers; the client's
// deadline or the server's Close ends it), Garbage (a 200 whose body is
// not JSON), Func (computed from the request), else Content and Calls.
type Step struct {
	Status  int
	Hang    bool
	Garbage bool
	Func    func(req ChatRequest) Step
	Content string
	Calls   []Call
	// Expect checks the request; a failure is kept for Server.Err.
	Expect func(req ChatRequest) error
	// Repeat keeps answering with this step once the script reaches it.
	Repeat bool
}

// ChatRequest is the part of a chat completions request tests look at.
type ChatRequest struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []Message `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// Message is a chat message as sent on the wire.
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// Text is the message's content as text.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	return string(m.Content)
}

// Last returns the request's last message.
func (r ChatRequest) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// ToolResult returns the content of the result of the call with this id,
// or "".
func (r ChatRequest) ToolResult(id string) string {
	for _, m := range r.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return m.Text()
		}
	}
	return ""
}

// Server is the scripted endpoint. Its URL + "/v1" is an OPENAI_BASE_URL.
type Server struct {
	*httptest.Server

	mu          sync.Mutex
	script      []Step
	next        int
	requests    []ChatRequest
	errs        []error
	transcript  string
	audioIn     [][]byte
	speechIn    []string
	noSpeech    bool
	calls       int
	hangRelease chan struct{}
}

// New starts a server that answers chat completions with script, in order.
func New(script ...Step) *Server {
	s := &Server{script: script, transcript: "hello", hangRelease: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.route)
	s.Server = httptest.NewServer(mux)
	return s
}

// BaseURL is the OPENAI_BASE_URL for this server.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Close releases hanging requests and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.hangRelease:
	default:
		close(s.hangRelease)
	}
	s.mu.Unlock()
	s.Server.CloseClientConnections()
	s.Server.Close()
}

// Push appends steps to the script.
func (s *Server) Push(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, steps...)
}

// SetTranscript sets what the transcription endpoint hears.
func (s *Server) SetTranscript(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.transcript = text
}

// SetSpeech turns the speech endpoint on (the default) or off: off, it
// answers 404 like an endpoint without speech (Ollama, llama.cpp).
func (s *Server) SetSpeech(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noSpeech = !on
}

// Requests returns the chat requests received so far.
func (s *Server) Requests() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatRequest(nil), s.requests...)
}

// Audio returns the audio files the transcription endpoint received.
func (s *Server) Audio() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.audioIn...)
}

// Speech returns the texts the speech endpoint was asked to say.
func (s *Server) Speech() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.speechIn...)
}

// Err reports failed Expect checks and unscripted requests.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) == 0 {
		return nil
	}
	var b strings.Builder
	for _, e := range s.errs {
		b.WriteString(e.Error() + "\n")
	}
	return fmt.Errorf("agenttest: %s", strings.TrimSpace(b.String()))
}

// Remaining is how many scripted steps were not used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next < len(s.script) && s.script[s.next].Repeat {
		return 0
	}
	return len(s.script) - s.next
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.chat(w, r)
	case strings.HasSuffix(r.URL.Path, "/audio/transcriptions"):
		s.transcribe(w, r)
	case strings.HasSuffix(r.URL.Path, "/audio/speech"):
		s.speech(w, r)
	default:
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
	}
}

func (s *Server) fail(format string, args ...any) {
	s.errs = append(s.errs, fmt.Errorf(format, args...))
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req ChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.mu.Lock()
		s.fail("request %d is not JSON: %v", len(s.requests)+1, err)
		s.mu.Unlock()
		writeErr(w, 400, "bad request")
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.calls++
	n := s.calls
	if s.next >= len(s.script) {
		s.fail("request %d: the script has no step left (last message: %s)", n, req.Last().Text())
		s.mu.Unlock()
		writeErr(w, 500, "agenttest: script exhausted")
		return
	}
	step := s.script[s.next]
	if !step.Repeat {
		s.next++
	}
	release := s.hangRelease
	s.mu.Unlock()

	if step.Expect != nil {
		if err := step.Expect(req); err != nil {
			s.mu.Lock()
			s.fail("request %d: %v", n, err)
			s.mu.Unlock()
		}
	}
	if step.Func != nil {
		step = step.Func(req)
	}
	switch {
	case step.Status != 0:
		writeErr(w, step.Status, fmt.Sprintf("scripted failure %d", step.Status))
		return
	case step.Hang:
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return
	case step.Garbage:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices":[{"message":`)
		return
	}
	if req.Stream {
		s.stream(w, req, step, n)
		return
	}
	msg := map[string]any{"role": "assistant", "content": nullable(step.Content)}
	finish := "stop"
	if len(step.Calls) > 0 {
		var tcs []map[string]any
		for i, c := range step.Calls {
			tcs = append(tcs, map[string]any{"id": c.id(n, i), "type": "function",
				"function": map[string]string{"name": c.Name, "arguments": c.Args}})
		}
		msg["tool_calls"] = tcs
		finish = "tool_calls"
	}
	writeJSON(w, map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

// stream answers in server-sent events, splitting arguments in pieces as
// real servers do.
func (s *Server) stream(w http.ResponseWriter, req ChatRequest, step Step, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, piece := range split(step.Content, 8) {
		chunk(map[string]any{"content": piece}, nil)
	}
	for i, c := range step.Calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id(n, i), "type": "function",
			"function": map[string]string{"name": c.Name, "arguments": ""}}}}, nil)
		for _, piece := range split(c.Args, 16) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]string{"arguments": piece}}}}, nil)
		}
	}
	finish := "stop"
	if len(step.Calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

func split(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func (c Call) id(n, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d_%d", n, i)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil, "param": nil}})
	_, _ = w.Write(b)
}

// transcribe accepts a multipart upload and checks it is real audio: a
// RIFF/WAVE file with samples that are not all silence.
func (s *Server) transcribe(w http.ResponseWriter, r *http.Request) {
	mr, err := r.MultipartReader()
	if err != nil {
		writeErr(w, 400, "expected multipart/form-data")
		return
	}
	var audio []byte
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		if p.FormName() == "file" {
			audio, _ = io.ReadAll(p)
		}
		_ = p.Close()
	}
	if err := CheckWAV(audio); err != nil {
		s.mu.Lock()
		s.fail("transcription: %v", err)
		s.mu.Unlock()
		writeErr(w, 400, err.Error())
		return
	}
	s.mu.Lock()
	s.audioIn = append(s.audioIn, audio)
	text := s.transcript
	s.mu.Unlock()
	writeJSON(w, map[string]string{"text": text})
}

// speech returns a short WAV tone and records the text.
func (s *Server) speech(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Input == "" {
		writeErr(w, 400, "expected {\"input\":…}")
		return
	}
	s.mu.Lock()
	off := s.noSpeech
	if !off {
		s.speechIn = append(s.speechIn, req.Input)
	}
	s.mu.Unlock()
	if off {
		writeErr(w, http.StatusNotFound, "404 page not found")
		return
	}
	w.Header().Set("Content-Type", "audio/wav")
	_, _ = w.Write(Tone(0.3))
}

// Tone returns a mono 16 kHz 16-bit WAV of a 440 Hz tone.
func Tone(seconds float64) []byte {
	n := int(seconds * mic.Rate)
	pcm := make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(8000*math.Sin(2*math.Pi*440*float64(i)/mic.Rate))))
	}
	return mic.WAV(pcm, mic.Rate)
}

// CheckWAV says whether b is a 16-bit PCM WAV file with at least 0.1 s of
// samples that are not all silence.
func CheckWAV(b []byte) error {
	pcm, f, err := mic.ReadWAV(b)
	switch {
	case err != nil:
		return err
	case f.Bits != 16:
		return fmt.Errorf("WAV: want 16-bit PCM, got %d bits at %d Hz", f.Bits, f.Rate)
	case len(pcm) < f.Rate/10*2:
		return fmt.Errorf("WAV: only %d bytes of audio", len(pcm))
	}
	loud := 0
	for i := 0; i+1 < len(pcm); i += 2 {
		if v := int16(binary.LittleEndian.Uint16(pcm[i:])); v > 500 || v < -500 {
			loud++
		}
	}
	if loud < 100 {
		return fmt.Errorf("WAV: silence")
	}
	return nil
}
