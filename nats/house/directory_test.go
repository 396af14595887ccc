package house_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
	"github.com/lumen-home/lumen/web"
)

// piDaemon runs a real daemon as Pi name of the hub whose data is data,
// with lights and groups, until the test ends or it is closed.
func piDaemon(t *testing.T, hub *house.Hub, data, name, seed string, lights []string, groups map[string][]string) *daemon.Daemon {
	t.Helper()
	ca, err := house.EnsureCA(house.Dir(data))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	creds := filepath.Join(dir, name+".creds")
	if err := (house.Creds{Pi: name, Lights: lights, Seed: seed, CA: string(ca.PEM)}).Write(creds); err != nil {
		t.Fatal(err)
	}
	cfg := daemon.DefaultConfig(filepath.Join(dir, "data"))
	cfg.Listen, cfg.Lights, cfg.Sync, cfg.ClockMode, cfg.Hardware.Driver = "127.0.0.1:0", lights, broker.SyncBatch, "trust", "sim"
	cfg.HTTP, cfg.Groups = web.Off, groups
	cfg.Hub, cfg.Creds = "tls://localhost:"+portOf(hub.LeafAddr()), creds
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

// A Pi's client reads the house's directory: both Pis' lights, each with
// its Pi, groups and states, online; once a Pi stops its lights stay
// listed, offline, with what was known. The subject answers the
// directory and nothing else, and a server that is no Pi of a house says
// so with ErrNoHouse.
func TestHouseLights(t *testing.T) {
	data := t.TempDir()
	var r house.Registry
	aSeed := register(t, &r, "pia", "kitchen", "pantry")
	bSeed := register(t, &r, "pib", "hall")
	save(t, &r, data)
	hub := runHub(t, house.HubConfig{Data: data})
	a := piDaemon(t, hub, data, "pia", aSeed, []string{"kitchen", "pantry"}, map[string][]string{"downstairs": {"kitchen"}})
	b := piDaemon(t, hub, data, "pib", bSeed, []string{"hall"}, map[string][]string{"downstairs": {"hall"}, "night": {"hall"}})

	nc := lumentest.Connect(t, a.URL())
	c := wire.New(nc, wire.WithTimeout(10*time.Second))
	ctx := context.Background()
	var (
		got []messages.HouseLight
		err error
	)
	read := func(what string, done func() bool) {
		t.Helper()
		lumentest.WaitFor(t, 30*time.Second, what, func() bool {
			got, err = c.HouseLights(ctx)
			return err == nil && done()
		})
	}
	find := func(light string) messages.HouseLight {
		i := slices.IndexFunc(got, func(l messages.HouseLight) bool { return l.Light == light })
		if i < 0 {
			return messages.HouseLight{}
		}
		return got[i]
	}
	read("every light online", func() bool {
		return len(got) == 3 && find("kitchen").Online && find("pantry").Online && find("hall").Online
	})
	want := []struct {
		light, pi string
		groups    []string
	}{
		{"hall", "pib", []string{"downstairs", "night"}},
		{"kitchen", "pia", []string{"downstairs"}},
		{"pantry", "pia", nil},
	}
	for i, w := range want {
		l := got[i]
		if l.Light != w.light || l.Pi != w.pi || !slices.Equal(l.Groups, w.groups) || !slices.Contains(l.States, "off") {
			t.Errorf("directory[%d] = %+v, want %s of %s in %v with its states", i, l, w.light, w.pi, w.groups)
		}
	}
	known := find("hall")

	// The hub's own clients read it too.
	hubNC := lumentest.Connect(t, hub.URL())
	if at, err := wire.New(hubNC).HouseLights(ctx); err != nil || len(at) != 3 {
		t.Errorf("the directory at the hub: %+v, %v", at, err)
	}

	// The subject answers the directory, whatever the body, and exactly
	// its keys; any longer subject is refused.
	m, err := nc.Request(subject.HouseLights(), []byte(`{"light":"hall","verb":"apply"}`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(m.Data))
	dec.DisallowUnknownFields()
	var reply messages.HouseLightsReply
	if err := dec.Decode(&reply); err != nil || !reply.OK || len(reply.Lights) != 3 {
		t.Errorf("the directory with a body: %s (%v)", m.Data, err)
	}
	for _, subj := range []string{subject.HouseLights() + ".hall", subject.HouseLights() + ".hall.cmd.get"} {
		m, err := nc.Request(subj, nil, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", subj, err)
		}
		if code := m.Header.Get("Nats-Service-Error-Code"); code != "400" {
			t.Errorf("%s: code %q, %s", subj, code, m.Data)
		}
	}

	// Pi B stops: hall stays listed, offline, as it was known.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	read("hall offline", func() bool { return len(got) == 3 && !find("hall").Online })
	if h := find("hall"); h.Pi != "pib" || !slices.Equal(h.Groups, known.Groups) || !slices.Equal(h.States, known.States) {
		t.Errorf("hall once its Pi is away: %+v, was %+v", h, known)
	}
	if !find("kitchen").Online {
		t.Errorf("kitchen went offline with another Pi: %+v", got)
	}

	// A daemon that is no Pi of a house.
	alone := lumentest.StartBus(t, broker.Config{Lights: []string{"desk"}})
	anc := lumentest.Connect(t, alone.ClientURL())
	_, err = wire.New(anc, wire.WithTimeout(5*time.Second)).HouseLights(ctx)
	if !errors.Is(err, wire.ErrNoHouse) || !strings.Contains(err.Error(), "not in a house") {
		t.Errorf("HouseLights on a server of no house: %v", err)
	}
}
