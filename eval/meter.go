package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
)

// meter is an HTTP proxy between a scratch light's agent and the model's
// endpoint that counts what each case costs: chat completions (the
// model's turns) and the tokens the endpoint says they used. The agent
// still speaks to a real endpoint over HTTP; the meter only reads the
// replies going by.
type meter struct {
	srv *http.Server
	url string

	mu     sync.Mutex
	turns  int
	tokens int
}

// maxMetered is how much of a reply the meter reads for its usage.
const maxMetered = 8 << 20

// startMeter proxies to base, the endpoint's URL (…/v1).
func startMeter(base string) (*meter, error) {
	target, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil || target.Scheme == "" || target.Host == "" {
		return nil, fmt.Errorf("eval: endpoint URL %q: give http(s)://HOST[:PORT]/PATH, e.g. http://localhost:11434/v1", base)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("eval: meter: %w", err)
	}
	m := &meter{url: "http://" + ln.Addr().String()}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		ModifyResponse: func(res *http.Response) error {
			if strings.HasSuffix(res.Request.URL.Path, "/chat/completions") {
				res.Body = &usageReader{body: res.Body, m: m}
			}
			return nil
		},
	}
	m.srv = &http.Server{Handler: proxy}
	go m.srv.Serve(ln) //nolint:errcheck // ends with Close
	return m, nil
}

// URL is the base URL the agent is given instead of the endpoint's.
func (m *meter) URL() string { return m.url }

// read returns the turns and tokens counted so far.
func (m *meter) read() (turns, tokens int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.turns, m.tokens
}

func (m *meter) close() { m.srv.Close() }

// usageReader passes a chat completion's reply through, then counts it:
// one turn, and the usage's total_tokens, from the JSON reply or from
// the last chunk of a stream that carries one.
type usageReader struct {
	body io.ReadCloser
	m    *meter
	buf  bytes.Buffer
	done bool
}

func (u *usageReader) Read(p []byte) (int, error) {
	n, err := u.body.Read(p)
	if u.buf.Len() < maxMetered {
		u.buf.Write(p[:n])
	}
	if err == io.EOF {
		u.count()
	}
	return n, err
}

func (u *usageReader) Close() error {
	u.count()
	return u.body.Close()
}

func (u *usageReader) count() {
	if u.done {
		return
	}
	u.done = true
	tokens := usage(u.buf.Bytes())
	u.m.mu.Lock()
	u.m.turns++
	u.m.tokens += tokens
	u.m.mu.Unlock()
}

// usage is the total_tokens of a reply: a JSON body, or server-sent
// events whose chunks may carry a usage (the last one that does counts).
func usage(b []byte) int {
	type withUsage struct {
		Usage *struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	var whole withUsage
	if json.Unmarshal(b, &whole) == nil && whole.Usage != nil {
		return whole.Usage.TotalTokens
	}
	total := 0
	for line := range bytes.Lines(b) {
		data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
		if !ok {
			continue
		}
		var chunk withUsage
		if json.Unmarshal(bytes.TrimSpace(data), &chunk) == nil && chunk.Usage != nil {
			total = chunk.Usage.TotalTokens
		}
	}
	return total
}
