package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// Some things a request makes are for the person only: a webhook's
// token must reach whoever configures the sender, and never the model or
// the journal. A tool hands them out through the request's context; the
// request's reply carries them, once.

type handoutsKey struct{}

// handouts collects what a request hands out.
type handouts struct {
	mu    sync.Mutex
	hooks []messages.WebhookGiven
}

func withHandouts(ctx context.Context) (context.Context, *handouts) {
	h := &handouts{}
	return context.WithValue(ctx, handoutsKey{}, h), h
}

// handOut gives w to the person asking, if anyone is.
func handOut(ctx context.Context, w messages.WebhookGiven) {
	if h, ok := ctx.Value(handoutsKey{}).(*handouts); ok {
		h.mu.Lock()
		h.hooks = append(h.hooks, w)
		h.mu.Unlock()
	}
}

func (h *handouts) take() []messages.WebhookGiven {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.hooks
	h.hooks = nil
	return out
}

// createSource creates a data source. A webhook gets a fresh token (one
// the model wrote is replaced: the model must not know it), which goes to
// the person; the model learns the URL.
func (t *Tools) createSource(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var def map[string]json.RawMessage
	var typ, name string
	if json.Unmarshal(args, &def) != nil || json.Unmarshal(def["type"], &typ) != nil || datasource.CanonicalType(typ) != datasource.TypeWebhook {
		return t.command(ctx, messages.VerbCreateSource, args) // the light says what is wrong
	}
	_ = json.Unmarshal(def["name"], &name)
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("agent: a webhook token: %w", err)
	}
	token := hex.EncodeToString(raw)
	def["token"], _ = json.Marshal(token)
	body, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	res, err := t.command(ctx, messages.VerbCreateSource, body)
	if err != nil {
		return nil, err
	}
	list, _ := wire.Typed[messages.SourcesReply](ctx, t.Light, messages.VerbListSources, nil)
	url := list.WebhookURLs[name]
	handOut(ctx, messages.WebhookGiven{Source: name, URL: url, Token: token})
	var out map[string]any
	if json.Unmarshal(res, &out) != nil || out == nil {
		out = map[string]any{}
	}
	out["url"] = url
	out["token"] = "given to the person, not to you: the sender posts to the URL with the header Authorization: Bearer <token>"
	if url == "" {
		out["url_note"] = "the daemon serves no HTTP: the operator turns it on with lumen up --http HOST:PORT"
	}
	return json.Marshal(out)
}
