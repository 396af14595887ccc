package house_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// houseReply is a reply's error code and sentence (from the headers)
// and its body.
type houseReply struct {
	code, desc string
	raw        []byte
}

// houseAsk sends body to light's verb on nc and returns the reply.
func houseAsk(t *testing.T, nc *nats.Conn, subj, body string) houseReply {
	t.Helper()
	m, err := nc.Request(subj, []byte(body), 30*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subj, err)
	}
	r := houseReply{raw: m.Data}
	if m.Header != nil {
		r.code, r.desc = m.Header.Get("Nats-Service-Error-Code"), m.Header.Get("Nats-Service-Error")
	}
	return r
}

// Everyday commands said to a light of one Pi with no model reach the
// lights of another Pi through the hub: by name, alias and group (read
// from the hub's directory), or all of the house's lights; each change is
// journaled on the target light by the asking Pi. A name no light of the
// house answers to is not guessed: the refusal lists the whole house.
func TestHouseEverydayRouting(t *testing.T) {
	data := t.TempDir()
	var r house.Registry
	aSeed := register(t, &r, "pia", "hall")
	bSeed := register(t, &r, "pib", "kitchen", "porch")
	save(t, &r, data)
	hub := runHub(t, house.HubConfig{Data: data})
	a := piDaemon(t, hub, data, "pia", aSeed, []string{"hall"}, nil)
	b := piDaemon(t, hub, data, "pib", bSeed, []string{"kitchen", "porch"}, map[string][]string{"outside": {"porch"}})
	ncA, ncB := lumentest.Connect(t, a.URL()), lumentest.Connect(t, b.URL())

	// The kitchen's alias, its states kept (the demo's), from its own Pi.
	cfg := machine.Demo()
	cfg.Aliases = []string{"pendant"}
	body, _ := json.Marshal(cfg)
	if r := houseAsk(t, ncB, subject.Cmd("kitchen", messages.VerbApply), string(body)); r.code != "" {
		t.Fatalf("apply kitchen: %s %s", r.code, r.desc)
	}
	lights := map[string]*nats.Conn{"hall": ncA, "kitchen": ncB, "porch": ncB}
	for l, nc := range lights {
		if r := houseAsk(t, nc, subject.Cmd(l, messages.VerbSetState), `{"name":"red"}`); r.code != "" {
			t.Fatalf("set_state %s: %s %s", l, r.code, r.desc)
		}
	}
	// Pi A reads the house as the hub knows it: every light, the alias
	// and the group.
	c := wire.New(ncA, wire.WithTimeout(10*time.Second))
	lumentest.WaitFor(t, 30*time.Second, "the house's directory at Pi A", func() bool {
		got, err := c.HouseLights(context.Background())
		if err != nil || len(got) != 3 {
			return false
		}
		for _, l := range got {
			if !l.Online {
				return false
			}
		}
		return slices.Contains(got[1].Aliases, "pendant") && slices.Equal(got[2].Groups, []string{"outside"})
	})

	state := func(light string) string {
		t.Helper()
		var g messages.GetReply
		if err := json.Unmarshal(houseAsk(t, lights[light], subject.Cmd(light, messages.VerbGet), `{}`).raw, &g); err != nil {
			t.Fatal(err)
		}
		return g.State
	}
	said := func(text string) houseReply {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"text": text})
		return houseAsk(t, ncA, subject.Cmd("hall", messages.VerbAsk), string(b))
	}
	done := func(text string) string {
		t.Helper()
		r := said(text)
		var a struct {
			Status string `json:"status"`
			Answer string `json:"answer"`
		}
		if err := json.Unmarshal(r.raw, &a); r.code != "" || err != nil || a.Status != messages.AgentDone {
			t.Fatalf("%q: %s %s %s", text, r.code, r.desc, r.raw)
		}
		return a.Answer
	}

	// Another Pi's light by its name: the kitchen goes off, hall stays;
	// journaled on the kitchen by Pi A.
	if a := done("turn off the kitchen light"); a != "kitchen: off." {
		t.Errorf("answer %q", a)
	}
	if k, h := state("kitchen"), state("hall"); k != "off" || h != "red" {
		t.Fatalf("kitchen %s, hall %s", k, h)
	}
	var why messages.WhyReply
	if err := json.Unmarshal(houseAsk(t, ncB, subject.Cmd("kitchen", messages.VerbWhy), `{}`).raw, &why); err != nil ||
		!strings.HasPrefix(why.Input.By+":", "pi:pia:") || why.Input.Type != messages.InPower {
		t.Errorf("why of the kitchen: %+v %v", why.Input, err)
	}
	// By its alias, back to the state it was in.
	done("pendant on")
	if k := state("kitchen"); k != "red" {
		t.Fatalf("pendant on: kitchen %s", k)
	}
	// A group of the other Pi.
	done("outside lights off")
	if p, k := state("porch"), state("kitchen"); p != "off" || k != "red" {
		t.Fatalf("outside lights off: porch %s, kitchen %s", p, k)
	}
	// Every light of the house.
	if a := done("all the lights off"); a != "hall: off; kitchen: off; porch: off." {
		t.Errorf("answer %q", a)
	}
	for l := range lights {
		if s := state(l); s != "off" {
			t.Errorf("all off: %s is %s", l, s)
		}
	}
	// A name the house does not know: the whole house is listed.
	if r := said("turn off the garage light"); r.code != "409" ||
		!strings.Contains(r.desc, `called "garage": the lights are hall, kitchen, porch; the groups outside`) {
		t.Errorf("garage: %s %q", r.code, r.desc)
	}
	// What the hub does not pass: a Pi's apply of another Pi's light.
	if r := houseAsk(t, ncA, subject.HouseCmd("kitchen", messages.VerbApply), string(body)); r.code != "403" {
		t.Errorf("apply of kitchen through the house: %s %q", r.code, r.desc)
	}
}
