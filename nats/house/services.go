package house

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// The hub's services, in its own account: what the house's clients
// reach that no single Pi may answer. Discovery asks each Pi's account
// and passes on only what its own lights say; a Pi's ask for an everyday
// verb of any light goes to that light, journaled by pi:<name>; its ask
// for the house's lights is answered from the hub's directory. (The
// fleet's and groups' commands need no service: the server hands each
// Pi's account its own lights' addressed form, perms.go.) So no Pi
// answers for a light of another.

const (
	// askWait bounds a light's reply to a Pi's ask: those verbs answer
	// in milliseconds.
	askWait = 30 * time.Second
	// discoverWait bounds a Pi's discovery replies: each of its lights
	// answers at once, from the same server.
	discoverWait = 2 * time.Second
)

// serve subscribes the hub's services on its connection.
func (h *Hub) serve() error {
	for _, s := range []struct {
		subj string
		cb   nats.MsgHandler
	}{
		{WhySubject, h.answerWhy},
		{"$SRV.>", h.discovery},
		{subject.PiHouse("*") + ".>", h.ask},
		// The hub's own clients may read the directory too.
		{subject.HouseLights(), h.answerLights},
	} {
		if _, err := h.nc.Subscribe(s.subj, s.cb); err != nil {
			return fmt.Errorf("house: serve %s: %w", s.subj, err)
		}
	}
	return nil
}

// answerWhy answers the Pis the hub refused (WhySubject).
func (h *Hub) answerWhy(m *nats.Msg) {
	if why := h.why(string(m.Data)); why != "" {
		_ = m.Respond([]byte(why))
	}
}

// relay passes what p's lights announce (events, LED, gpio), which the
// hub's account receives under p's prefix, on to the hub's clients under
// its own subject. It subscribes after p's account is made, so that it
// hears it.
func (h *Hub) relay(p Pi) error {
	pre := subject.PiPrefix(p.Name) + pubSuffix + "."
	sub, err := h.nc.Subscribe(pre+">", func(m *nats.Msg) {
		// No reply: a client cannot answer the Pi's journal writes.
		_ = h.nc.PublishMsg(&nats.Msg{Subject: strings.TrimPrefix(m.Subject, pre), Header: m.Header, Data: m.Data})
	})
	if err != nil {
		return fmt.Errorf("house: relay Pi %s: %w", p.Name, err)
	}
	h.relays[accountName(p)] = sub
	return nil
}

// connected are the registered Pis connected now.
func (h *Hub) connected() []Pi {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Pi
	for _, p := range h.reg.Pis {
		if h.online[p.Name] {
			out = append(out, p)
		}
	}
	return out
}

// discovery answers $SRV.<verb>[.<name>[.<id>]] ('nats micro ls',
// 'lumen ls') with what each connected Pi's lights say, and only that.
func (h *Hub) discovery(m *nats.Msg) {
	rest, ok := strings.CutPrefix(m.Subject, "$SRV.")
	if !ok || m.Reply == "" {
		return
	}
	for _, p := range h.connected() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), discoverWait)
			defer cancel()
			h.lookup(ctx, p, rest, func(r *nats.Msg, _ micro.Info) { h.pass(m, r) })
		}()
	}
}

// lookup sends a discovery request ($SRV.<rest>) to p's account and
// hands each answer of one of p's own lights to each, until every light
// of p has answered, none does, or ctx ends.
func (h *Hub) lookup(ctx context.Context, p Pi, rest string, each func(*nats.Msg, micro.Info)) {
	inbox := h.nc.NewRespInbox()
	replies := make(chan *nats.Msg, 64)
	sub, err := h.nc.ChanSubscribe(inbox, replies)
	if err != nil {
		return
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := h.nc.PublishRequest(subject.PiPrefix(p.Name)+".srv."+rest, inbox, nil); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, discoverWait)
	defer cancel()
	seen := map[string]bool{}
	for len(seen) < len(p.Lights) {
		select {
		case r := <-replies:
			if r.Header.Get("Status") == "503" {
				return // no light of p answers
			}
			info, ok := ownService(p, r.Data)
			if !ok || seen[info.Metadata[subject.MetaLight]] {
				continue
			}
			seen[info.Metadata[subject.MetaLight]] = true
			each(r, info)
		case <-ctx.Done():
			return
		}
	}
}

// ownService reads a discovery answer from p's account: the service of
// one of p's lights, whose endpoints are that light's commands and fan
// outs only. Anything else p says is not passed on.
func ownService(p Pi, data []byte) (micro.Info, bool) {
	var info micro.Info
	if json.Unmarshal(data, &info) != nil || info.Name != subject.Service {
		return info, false
	}
	light := info.Metadata[subject.MetaLight]
	if !slices.Contains(p.Lights, light) {
		return info, false
	}
	own := subject.CmdPrefix(light) + "."
	for _, e := range info.Endpoints {
		if !strings.HasPrefix(e.Subject, own) && !subject.FanOut(e.Subject) {
			return info, false
		}
	}
	return info, true
}

// ask serves a Pi's lumen.sys.house.<light>.cmd.<verb>: an everyday verb
// of any light of the house, journaled by pi:<name> (and who asked on
// the Pi, when it says); and its lumen.sys.house.lights, the house's
// directory (directory.go).
func (h *Hub) ask(m *nats.Msg) {
	if _, ok := subject.ParsePiHouseLights(m.Subject); ok {
		h.answerLights(m)
		return
	}
	pi, light, verb, ok := subject.ParsePiHouse(m.Subject)
	if !ok {
		_ = wire.ReplyError(m, 400, fmt.Sprintf("ask the house on %s, or for its lights on %s", subject.HouseCmd("LIGHT", "VERB"), subject.HouseLights()))
		return
	}
	if !slices.Contains(messages.HouseVerbs(), verb) {
		_ = wire.ReplyError(m, 403, fmt.Sprintf("%s of light %s: a Pi may ask the house for %s of another Pi's light; the rest stays with the light's own Pi and the house's users",
			messages.Clip(verb), light, houseVerbs()))
		return
	}
	owner, since := h.whereIs(light)
	switch {
	case owner == "":
		_ = wire.ReplyError(m, 404, fmt.Sprintf("no light named %s in the house ('lumen hub pi ls' on the hub lists them)", light))
		return
	case !since.IsZero():
		_ = wire.ReplyError(m, 404, fmt.Sprintf("light %s does not answer: its Pi %s is not connected to the hub (since %s)", light, owner, since.Format(time.RFC3339)))
		return
	}
	who := messages.Who("pi", pi)
	if asked := messages.CleanWho(m.Header.Get(messages.HeaderWho)); asked != "" {
		who = messages.CleanWho(messages.Who("pi", pi, asked))
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), askWait)
		defer cancel()
		r, err := h.send(ctx, light, verb, m, who)
		if err != nil {
			_ = wire.ReplyError(m, 404, fmt.Sprintf("light %s does not answer (%v)", light, err))
			return
		}
		h.pass(m, r)
	}()
}

// whereIs returns the Pi that runs light ("" for none), and since when
// it is away (zero when connected).
func (h *Hub) whereIs(light string) (pi string, away time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	pi = h.reg.Owner(light)
	if pi != "" && !h.online[pi] {
		away = h.since[pi]
		if away.IsZero() {
			away = time.Now().UTC()
		}
	}
	return pi, away
}

// send asks light for verb with m's body and headers, journaled by who.
func (h *Hub) send(ctx context.Context, light, verb string, m *nats.Msg, who string) (*nats.Msg, error) {
	req := nats.NewMsg(subject.Cmd(light, verb))
	req.Data, req.Header = m.Data, withWho(m.Header, who)
	return h.nc.RequestMsgWithContext(ctx, req)
}

// withWho is a copy of h with the Lumen-Who header who.
func withWho(h nats.Header, who string) nats.Header {
	out := nats.Header{}
	for k, v := range h {
		out[k] = slices.Clone(v)
	}
	out.Set(messages.HeaderWho, who)
	return out
}

// pass sends a light's reply r on as a reply to m, error headers with it.
func (h *Hub) pass(m, r *nats.Msg) {
	if m.Reply == "" {
		return
	}
	_ = h.nc.PublishMsg(&nats.Msg{Subject: m.Reply, Header: r.Header, Data: r.Data})
}

// houseVerbs lists the verbs a Pi may ask the house for, as a sentence
// says them: "fire, power, … and toggle".
func houseVerbs() string {
	v := messages.HouseVerbs()
	if len(v) < 2 {
		return strings.Join(v, "")
	}
	return strings.Join(v[:len(v)-1], ", ") + " and " + v[len(v)-1]
}
