package tool

import (
	"context"
	"fmt"
	"net"
	"net/url"

	"github.com/lumen-home/lumen/plugins"
	"github.com/lumen-home/lumen/plugins/netpolicy"
	"github.com/lumen-home/lumen/plugins/secrets"
)

// fetcher is one tool's way out: secrets are substituted into the
// request's headers only for the hosts they are bound to, the network
// policy decides what may be reached, and secret values are redacted
// from the answer before the guest sees it.
//
// A tool defined with define_tool declares its hosts. The built-in fetch
// tools and precompiled plugins declare none (open): each request may
// reach the host of its own URL, and only it (a redirect elsewhere is
// refused), under every other rule of the policy, which is what keeps
// them off the LAN: private, loopback and metadata addresses and plain
// HTTP still need the operator's --allow-net. The client, and so the rate
// limit, is the tool's for all its requests.
type fetcher struct {
	client  *netpolicy.Client
	open    bool
	secrets *secrets.Store // nil: no secrets
}

func (f *fetcher) Fetch(ctx context.Context, req plugins.FetchRequest) (plugins.FetchResponse, error) {
	client := f.client
	headers := req.Headers
	u, perr := url.Parse(req.URL)
	if f.open && perr == nil && u.Host != "" {
		// A host the policy cannot parse is left undeclared: the client
		// then says what is wrong with the URL.
		if c, err := f.client.WithHosts([]string{u.Host}); err == nil {
			client = c
		}
	}
	if f.secrets != nil && len(headers) > 0 {
		if perr != nil {
			return plugins.FetchResponse{}, fmt.Errorf("fetch: %q is not a URL", req.URL)
		}
		host := u.Hostname()
		if port := u.Port(); port != "" {
			host = net.JoinHostPort(host, port)
		}
		_ = f.secrets.Reload() // `lumen secret set` may have changed them
		headers = make(map[string]string, len(req.Headers))
		for k, v := range req.Headers {
			s, err := f.secrets.Substitute(host, v)
			if err != nil {
				return plugins.FetchResponse{}, err
			}
			headers[k] = s
		}
	}
	resp, err := client.Fetch(ctx, netpolicy.Request{URL: req.URL, Method: req.Method, Headers: headers, Body: []byte(req.Body)})
	if err != nil {
		return plugins.FetchResponse{}, err
	}
	out := plugins.FetchResponse{Status: resp.Status, Headers: resp.Headers, Body: string(resp.Body)}
	if f.secrets != nil {
		out.Body = string(f.secrets.Redact(resp.Body))
		for k, v := range out.Headers {
			out.Headers[k] = string(f.secrets.Redact([]byte(v)))
		}
	}
	return out, nil
}
