package plugins

import "context"

// Fetcher makes the HTTP requests a tool's fetch asks for. The network
// policy (allowed hosts, private ranges, size and time caps, secrets)
// lives behind it; the host only carries requests and answers. An error
// becomes a TypeError thrown at the tool's fetch. Fetch must return when
// ctx ends: the call's deadline does not interrupt the host.
type Fetcher interface {
	Fetch(ctx context.Context, req FetchRequest) (FetchResponse, error)
}

// FetchRequest is fetch(url, {method, headers, body}).
type FetchRequest struct {
	URL     string            `json:"url"`
	Method  string            `json:"method,omitempty"` // GET when empty
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

// FetchResponse is what the tool's fetch resolves to.
type FetchResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body"`
}

// FetcherFunc makes a function a Fetcher.
type FetcherFunc func(ctx context.Context, req FetchRequest) (FetchResponse, error)

// Fetch calls f.
func (f FetcherFunc) Fetch(ctx context.Context, req FetchRequest) (FetchResponse, error) {
	return f(ctx, req)
}
