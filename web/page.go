package web

import (
	"cmp"
	"context"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"slices"
	"time"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

//go:embed static
var static embed.FS

//go:embed page.html
var pageHTML string

var pageTmpl = template.Must(template.New("page").Parse(pageHTML))

// staticFiles serves the page's script and style, embedded in the binary
// (no CDN: the page works on a Pi with no Internet).
func staticFiles() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has it
	}
	return http.StripPrefix("/static/", http.FileServerFS(sub))
}

// pageLight is a light as the page renders it: its LED, whether its
// agent has a model (without one the page offers everyday commands only,
// and says how to configure one) and takes speech; at a hub, its Pi and
// whether it answers.
type pageLight struct {
	LightInfo
	Agent, Talk bool
	Pi, Page    string // at a hub: its Pi, and the Pi's page ("": none to link)
	Online      bool
}

// pageArea is a room or group of the house view, with its lights.
type pageArea struct {
	Name   string
	Group  bool // a group's, for the lights with no room
	Lights []pageLight
}

// pagePi is a Pi of the house view: its page, if the hub can link to
// it, and whether any of its lights answers.
type pagePi struct {
	Name, Page string
	Online     bool
	Lights     []string
}

// pageData is what the template renders: the lights of one daemon, or
// at a hub (House) the house's, by area, with its Pis.
type pageData struct {
	House  bool
	Lights []pageLight
	Areas  []pageArea
	Pis    []pagePi
}

// page is the page, rendered with every light's name, state and color
// already in it: useful before any script runs, and to tools that only
// read HTML. Its script then makes it live.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	var data pageData
	var err error
	if s.cfg.House != nil {
		data, err = s.housePage(ctx)
	} else {
		data.Lights, err = s.pageLights(ctx, nil)
	}
	if err != nil {
		s.cfg.Logf("http: page: %v", err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := pageTmpl.Execute(w, data); err != nil {
		s.cfg.Logf("http: page: %v", err)
	}
}

// pageLights asks every light (names; nil: those that answer) for its
// LED and its agent at once (one round trip, not two, before the page's
// first byte).
func (s *Server) pageLights(ctx context.Context, names []string) ([]pageLight, error) {
	if names == nil {
		var err error
		if names, err = s.lightNames(ctx); err != nil {
			return nil, err
		}
	}
	var sessions []wire.Reply
	done := make(chan struct{})
	go func() {
		defer close(done)
		sessions = s.wire.RequestAll(ctx, names, messages.VerbSessions, nil)
	}()
	leds := s.lightsOf(ctx, names)
	<-done
	out := make([]pageLight, len(leds))
	for i, l := range leds {
		// A light whose agent did not answer keeps the full chat: the
		// page hides nothing on a guess.
		out[i] = pageLight{LightInfo: l, Agent: true, Talk: true, Online: true}
		if a, err := wire.As[messages.SessionsReply](sessions[i]); err == nil {
			out[i].Agent, out[i].Talk = a.Agent, a.Talk
		}
	}
	return out, nil
}

// housePage is the house view: every light of the house's directory, by
// room (a light with no room by its first group, else with the others),
// and the Pis with their pages. Only the lights that answer are asked
// for their LEDs; the others are shown as unreachable.
func (s *Server) housePage(ctx context.Context) (pageData, error) {
	data := pageData{House: true}
	dir, err := s.cfg.House.Lights(ctx)
	if err != nil {
		return data, err
	}
	online := []string{} // not nil: none answers, none to discover
	for _, l := range dir {
		if l.Online {
			online = append(online, l.Light)
		}
	}
	lit, err := s.pageLights(ctx, online)
	if err != nil {
		return data, err
	}
	byName := map[string]pageLight{}
	for _, l := range lit {
		byName[l.Light] = l
	}
	type areaKey struct {
		name  string
		group bool
	}
	areas := map[areaKey]int{} // → index in data.Areas
	pis := map[string]int{}
	for _, l := range dir {
		pl, ok := byName[l.Light]
		if !ok {
			pl = pageLight{LightInfo: LightInfo{Light: l.Light, State: "unknown"}}
		}
		pl.Pi, pl.Page, pl.Online = l.Pi, l.Page, ok
		key := areaKey{name: l.Room}
		if key.name == "" && len(l.Groups) > 0 {
			key = areaKey{l.Groups[0], true}
		}
		i, seen := areas[key]
		if !seen {
			i = len(data.Areas)
			areas[key] = i
			data.Areas = append(data.Areas, pageArea{Name: key.name, Group: key.group})
		}
		data.Areas[i].Lights = append(data.Areas[i].Lights, pl)
		j, seen := pis[l.Pi]
		if !seen {
			j = len(data.Pis)
			pis[l.Pi] = j
			data.Pis = append(data.Pis, pagePi{Name: l.Pi})
		}
		p := &data.Pis[j]
		p.Lights = append(p.Lights, l.Light)
		p.Online = p.Online || ok
		if p.Page == "" {
			p.Page = l.Page
		}
	}
	// Rooms by name, then groups, then the lights in neither (last).
	slices.SortFunc(data.Areas, func(a, b pageArea) int {
		return cmp.Or(cmp.Compare(boolInt(a.Name == ""), boolInt(b.Name == "")), cmp.Compare(boolInt(a.Group), boolInt(b.Group)), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(data.Pis, func(a, b pagePi) int { return cmp.Compare(a.Name, b.Name) })
	return data, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
