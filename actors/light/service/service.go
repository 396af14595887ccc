package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/internal/clock"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// ServiceVersion is the version advertised by the micro service.
const ServiceVersion = "0.1.0"

// Serve registers one light as an instance of the NATS micro service
// "lumen": its commands on lumen.<light>.cmd.<verb>, and the fleet fan-out
// on lumen.fleet.cmd.<verb> without a queue group, so every light answers.
// Handlers only translate requests into actor messages.
//
// A light in groups also answers lumen.group.<g>.cmd.<verb> for each.
// A verb nobody serves, under any of these prefixes, gets a 404 that
// lists the verbs the prefix takes (messages.Verbs for the light's own).
func Serve(nc *nats.Conn, root *actor.RootContext, pid *actor.PID, light string, groups []string, timeout time.Duration, opts ...ServeOption) (micro.Service, error) {
	h := &handler{root: root, pid: pid, light: light, timeout: timeout, minInterval: datasource.MinPollInterval, clock: clock.System(clock.Trust)}
	for _, o := range opts {
		o(h)
	}
	md := map[string]string{subject.MetaLight: light}
	if h.page != "" {
		md[subject.MetaPage] = h.page
	}
	if h.ha != "" {
		md[subject.MetaHA] = h.ha
	}
	svc, err := micro.AddService(nc, micro.Config{
		Name:        subject.Service,
		Version:     ServiceVersion,
		Description: "Lumen light " + light,
		Metadata:    md,
	})
	if err != nil {
		return nil, fmt.Errorf("light %s: service: %w", light, err)
	}
	own := svc.AddGroup(subject.CmdPrefix(light))
	meta := micro.WithEndpointMetadata(map[string]string{subject.MetaLight: light})
	for _, verb := range messages.VerbsOf(messages.PartLight) {
		if err := own.AddEndpoint(verb, micro.HandlerFunc(h.handle(verb)), meta); err != nil {
			_ = svc.Stop()
			return nil, fmt.Errorf("light %s: endpoint %s: %w", light, verb, err)
		}
	}
	// Its own queue group: NATS puts the subscriptions of one queue
	// group in one lot whatever their subjects, and would then hand a
	// known verb to this endpoint instead of the verb's.
	if err := own.AddEndpoint(unknownEndpoint, unknownVerb(subject.CmdPrefix(light), messages.Verbs(), ""),
		micro.WithEndpointSubject("*"), micro.WithEndpointQueueGroup(unknownEndpoint), meta); err != nil {
		_ = svc.Stop()
		return nil, fmt.Errorf("light %s: endpoint %s: %w", light, unknownEndpoint, err)
	}
	fanouts := map[string]string{"fleet": subject.FleetCmdPrefix()}
	for _, g := range groups {
		if err := subject.ValidGroup(g); err != nil {
			_ = svc.Stop()
			return nil, fmt.Errorf("light %s: group: %w", light, err)
		}
		fanouts["group_"+g] = subject.GroupCmdPrefix(g)
	}
	for name, prefix := range fanouts {
		grp := svc.AddGroup(prefix, micro.WithGroupQueueGroupDisabled())
		// Each verb twice: as sent to every light, and addressed to
		// this one (lumen.fleet.cmd.<verb>.<light>), which is how a
		// house's hub hands the fleet's and groups' commands to each
		// Pi: every Pi's account is sent only its own lights'.
		for _, verb := range fleetVerbs {
			for _, e := range []struct{ name, subj string }{{name + "_" + verb, verb}, {name + "_" + verb + "_addressed", verb + "." + light}} {
				if err := grp.AddEndpoint(e.name, micro.HandlerFunc(h.handle(verb)), micro.WithEndpointSubject(e.subj)); err != nil {
					_ = svc.Stop()
					return nil, fmt.Errorf("light %s: %s endpoint %s: %w", light, name, e.subj, err)
				}
			}
		}
		for _, e := range []struct{ name, subj string }{{name + "_" + unknownEndpoint, "*"}, {name + "_" + unknownEndpoint + "_addressed", "*." + light}} {
			if err := grp.AddEndpoint(e.name, unknownVerb(prefix, fleetVerbs, "."+light), micro.WithEndpointSubject(e.subj)); err != nil {
				_ = svc.Stop()
				return nil, fmt.Errorf("light %s: %s endpoint %s: %w", light, name, e.subj, err)
			}
		}
	}
	return svc, nil
}

// unknownEndpoint names the endpoints that answer the verbs nobody
// serves, and the queue group of the light's own.
const unknownEndpoint = "unknown"

// unknownVerb answers a request for a verb of prefix (followed by
// suffix, for an addressed fan-out) that is not among known with a 404
// that lists them, where NATS would only say "no responders". Its
// wildcard subscription receives the known verbs too: their own
// endpoints answer those, and it stays silent.
func unknownVerb(prefix string, known []string, suffix string) micro.HandlerFunc {
	known = slices.Sorted(slices.Values(known))
	list := strings.Join(known, ", ")
	return func(req micro.Request) {
		verb := strings.TrimSuffix(strings.TrimPrefix(req.Subject(), prefix+"."), suffix)
		if _, ok := slices.BinarySearch(known, verb); ok {
			return
		}
		wire.RespondError(req, 404, messages.UnknownVerb(verb, prefix, list))
	}
}

// ServeOption changes how Serve checks requests.
type ServeOption func(*handler)

// WithSourceMinInterval sets the shortest interval_ms a data source may
// have (default datasource.MinPollInterval, 10 s). It is the operator's policy,
// checked before anything is journaled; lumen up lowers it only for tests.
func WithSourceMinInterval(d time.Duration) ServeOption {
	return func(h *handler) {
		if d > 0 {
			h.minInterval = d
		}
	}
}

// ToolCatalog is what the daemon's tool manager knows and the light's
// model does not (actors/tool.Catalog): the built-in tools and the
// operator's plugins, read from the data directory at start and never
// journaled.
type ToolCatalog interface {
	Builtins() []messages.BuiltinTool
	Plugins() []messages.PluginTool
}

// WithToolCatalog lets list_tools show the built-in tools and the plugins
// besides the journaled definitions, and lets a data source fetch with a
// plugin: create_source and apply name, in the input they journal, the
// plugins the sources use, which the light then accepts (replay reads the
// same input, so it accepts them whatever the plugins directory holds by
// then). Without it list_tools has only the definitions and a source may
// not name a plugin.
func WithToolCatalog(c ToolCatalog) ServeOption {
	return func(h *handler) { h.catalog = c }
}

// WithWebhookBase gives the daemon's HTTP base, http://HOST:PORT (what
// lumen up --http listens on), so that list_sources tells each webhook
// source's URL. Without it (no HTTP port) list_sources tells none.
func WithWebhookBase(url string) ServeOption {
	return func(h *handler) { h.webhookBase = strings.TrimSuffix(url, "/") }
}

// WithPage gives the address of the daemon's page as it is bound
// (web.Site.Advertised), told in the service's discovery metadata
// (subject.MetaPage) so that a hub can link to it. Without it (no HTTP
// port) none is told.
func WithPage(url string) ServeOption {
	return func(h *handler) { h.page = url }
}

// WithClock gives the daemon's clock, which says what "now" is for a
// look into the past (get --at, whatif --since). Default: the wall clock.
func WithClock(c clock.Clock) ServeOption {
	return func(h *handler) { h.clock = c }
}

// WithZone gives the daemon's time zone, an IANA name (clock.Zone): a
// schedule created without a tz is journaled with it. Without it such a
// schedule is journaled without tz, which the light reads as UTC.
func WithZone(name string) ServeOption {
	return func(h *handler) { h.zone = name }
}

// WithHome gives the daemon's home (--home): a sun schedule created
// without lat and lon is journaled with it. Without it such a schedule
// is refused, with how to set it.
func WithHome(lat, lon float64) ServeOption {
	return func(h *handler) { h.home = &place{lat, lon} }
}

var fleetVerbs = messages.FleetVerbs()

type handler struct {
	root        *actor.RootContext
	pid         *actor.PID
	light       string
	timeout     time.Duration
	minInterval time.Duration    // of data sources
	catalog     ToolCatalog      // nil: no built-ins or plugins to tell
	sourceCheck SourceCheck      // gpio pins (WithSourceCheck); nil: none
	webhookBase string           // http://HOST:PORT of the webhooks (WithWebhookBase); "": none
	page        string           // the page's address, for discovery (WithPage); "": none
	ha          string           // the Home Assistant bridge's broker (WithHA); "": none
	journal     *journal.Journal // for get at a seq or a time (WithJournal); nil: none
	zone        string           // of schedules without tz (WithZone); "": none
	home        *place           // of sun schedules without a place (WithHome); nil: none
	clock       clock.Clock      // what now is (WithClock)
}

func (h *handler) handle(verb string) func(micro.Request) {
	return wire.Bounded(verb, messages.MaxBody, func(req micro.Request) {
		msg, err := translateWith(verb, req.Data(), h.checks())
		if err != nil {
			var br *badRequest
			if errors.As(err, &br) {
				wire.RespondError(req, br.code, fmt.Sprintf("%s: %s", verb, br.msg))
			} else {
				wire.RespondError(req, 400, fmt.Sprintf("%s: %v", verb, err))
			}
			return
		}
		if err := h.vetSources(msg); err != nil {
			wire.RespondError(req, sourceErrorCode(err), fmt.Sprintf("%s: %s", verb, sourceSentence(err)))
			return
		}
		switch m := msg.(type) {
		case *GetAt, *HistoryReq, *Rollback, *WhyReq, *WhatIfReq:
			h.past(req, verb, msg)
			return
		case *light.Command:
			m.By = whoAsks(req)
		}
		switch verb {
		case messages.VerbListSources:
			h.listSources(req)
			return
		case messages.VerbListTools:
			h.listTools(req)
			return
		}
		actors.Answer(req, h.root, h.pid, msg, h.timeout, verb, "the light", nil)
	})
}

// whoAsks is the by of a request's input: the door's Lumen-Who header,
// else fleet for a fan-out and nats for a bare request.
func whoAsks(req micro.Request) string {
	if who := messages.CleanWho(req.Headers().Get(messages.HeaderWho)); who != "" {
		return who
	}
	if subject.FanOut(req.Subject()) {
		return messages.WhoFleet
	}
	return messages.WhoNATS
}

// listSources answers list_sources from the light's model.
func (h *handler) listSources(req micro.Request) {
	actors.Answer(req, h.root, h.pid, &light.Get{}, h.timeout, messages.VerbListSources, "the light", func(res any) any {
		r, ok := res.(*messages.GetReply)
		if !ok {
			return res
		}
		out := &messages.SourcesReply{OK: true, Sources: r.Sources, LastRuns: r.LastRuns,
			WebhookURLs: webhookURLs(h.webhookBase, h.light, r.Sources)}
		if out.Sources == nil {
			out.Sources = []json.RawMessage{}
		}
		return out
	})
}

// webhookURLs returns the URL of each webhook source among sources, by
// name: base (http://HOST:PORT) and its path /hooks/<light>/<source>.
// Without a base there is no URL to give.
func webhookURLs(base, light string, sources []json.RawMessage) map[string]string {
	if base == "" {
		return nil
	}
	var urls map[string]string
	for _, raw := range sources {
		var d datasource.Def
		if d.UnmarshalJSON(raw) != nil || d.Kind() != datasource.TypeWebhook {
			continue
		}
		if urls == nil {
			urls = map[string]string{}
		}
		urls[d.Name] = base + datasource.HookPath(light, d.Name)
	}
	return urls
}

func (h *handler) checks() checks {
	c := checks{minInterval: h.minInterval, zone: h.zone, home: h.home}
	if h.catalog != nil {
		for _, p := range h.catalog.Plugins() {
			c.plugins = append(c.plugins, p.Name)
		}
	}
	return c
}

// listTools answers list_tools: the light's journaled definitions (the
// tool manager reads them so too), then the built-ins and the plugins
// from the catalog.
func (h *handler) listTools(req micro.Request) {
	actors.Answer(req, h.root, h.pid, &light.ListTools{}, h.timeout, messages.VerbListTools, "the light", func(res any) any {
		r, ok := res.(*messages.ToolsReply)
		if !ok {
			return res
		}
		out := &messages.ToolsReply{OK: true, Tools: r.Tools, Builtin: []messages.BuiltinTool{}, Plugins: []messages.PluginTool{}}
		if out.Tools == nil {
			out.Tools = []messages.Tool{}
		}
		if h.catalog != nil {
			out.Builtin = append(out.Builtin, h.catalog.Builtins()...)
			out.Plugins = append(out.Plugins, h.catalog.Plugins()...)
		}
		return out
	})
}
