package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
)

// haClient behaves as Home Assistant does on its broker: it reads the
// discovery, availability and state topics, publishes its birth message
// and the light entity's commands.
type haClient struct {
	t  *testing.T
	c  mqtt.Client
	mu sync.Mutex
	// got is every message received, by topic, in order.
	got map[string][]haMsg
}

type haMsg struct {
	payload  string
	retained bool
}

func newHA(t *testing.T, broker *lumentest.Mosquitto) *haClient {
	t.Helper()
	h := &haClient{t: t, got: map[string][]haMsg{}}
	o := mqtt.NewClientOptions().AddBroker("tcp://" + broker.Addr).SetClientID(fmt.Sprintf("home-assistant-%s-%d", t.Name(), time.Now().UnixNano())).
		SetAutoReconnect(true).SetConnectRetry(true).SetMaxReconnectInterval(time.Second)
	o.SetOnConnectHandler(func(c mqtt.Client) {
		for _, topic := range []string{"homeassistant/#", "lumen/#"} {
			c.Subscribe(topic, 1, func(_ mqtt.Client, m mqtt.Message) {
				h.mu.Lock()
				h.got[m.Topic()] = append(h.got[m.Topic()], haMsg{string(m.Payload()), m.Retained()})
				h.mu.Unlock()
			}).Wait()
		}
	})
	h.c = mqtt.NewClient(o)
	if tok := h.c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("the Home Assistant client cannot connect: %v", tok.Error())
	}
	t.Cleanup(func() { h.c.Disconnect(100) })
	return h
}

// last is the last payload on topic, "" if none.
func (h *haClient) last(topic string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ms := h.got[topic]
	if len(ms) == 0 {
		return ""
	}
	return ms[len(ms)-1].payload
}

func (h *haClient) all(topic string) []haMsg {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]haMsg(nil), h.got[topic]...)
}

func (h *haClient) forget(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.got, topic)
}

func (h *haClient) wait(what, topic string, ok func(string) bool) string {
	h.t.Helper()
	var p string
	lumentest.WaitFor(h.t, 20*time.Second, what, func() bool { p = h.last(topic); return p != "" && (ok == nil || ok(p)) })
	return p
}

// waitCleared waits until the retained message of topic is deleted (the
// last message an empty one).
func (h *haClient) waitCleared(what, topic string) {
	h.t.Helper()
	lumentest.WaitFor(h.t, 20*time.Second, what, func() bool {
		ms := h.all(topic)
		return len(ms) > 0 && ms[len(ms)-1].payload == ""
	})
}

func (h *haClient) send(topic, payload string) {
	h.t.Helper()
	if tok := h.c.Publish(topic, 1, false, payload); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		h.t.Fatalf("publish %s: %v", topic, tok.Error())
	}
}

type haState struct {
	State      string `json:"state"`
	Brightness int    `json:"brightness"`
	Color      *struct{ R, G, B int }
	ColorMode  string  `json:"color_mode"`
	ColorTemp  int     `json:"color_temp"`
	Effect     *string `json:"effect"`
}

// inputsBy counts the light's journaled inputs made by who.
func inputsBy(t *testing.T, js jetstream.JetStream, light, who string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := 0
	if err := journal.New(js).Replay(ctx, "lumen."+light+".evt.in.>", 0, 0, func(m journal.Msg) error {
		var env struct{ By string }
		if json.Unmarshal(m.Data, &env) == nil && env.By == who {
			n++
		}
		return nil
	}); err != nil {
		t.Fatalf("reading %s's inputs: %v", light, err)
	}
	return n
}

func decodeState(t *testing.T, p string) haState {
	t.Helper()
	var s haState
	if err := json.Unmarshal([]byte(p), &s); err != nil {
		t.Fatalf("state %q: %v", p, err)
	}
	return s
}

// A light in Home Assistant: discovered, available, driven by the light
// entity's commands (journaled by homeassistant, the LED following), its
// button's gestures as events, offline when lumen is killed and online
// again when it comes back, everything again after the broker loses its
// store or Home Assistant restarts.
func TestHomeAssistant(t *testing.T) {
	t.Parallel()
	broker := lumentest.StartMosquitto(t, "", "")
	h := newHA(t, broker)
	dir := t.TempDir()
	args := []string{"--light", "kitchen", "--hardware", "sim", "--ha-mqtt", broker.URL()}
	d := startDaemon(t, dir, args...)
	nc := connect(t, d.URL)

	disc := h.wait("the kitchen's discovery", "homeassistant/device/lumen_kitchen/config", nil)
	var cfg struct {
		Device       map[string]any
		Availability []struct{ Topic string }
		Components   map[string]map[string]any
	}
	if err := json.Unmarshal([]byte(disc), &cfg); err != nil {
		t.Fatalf("discovery %q: %v", disc, err)
	}
	light := cfg.Components["light"]
	if light["command_topic"] != "lumen/kitchen/set" || light["schema"] != "json" || cfg.Components["button"]["platform"] != "event" || len(cfg.Availability) != 1 {
		t.Fatalf("discovery: %s", disc)
	}
	avail := cfg.Availability[0].Topic
	h.wait("online", avail, func(p string) bool { return p == "online" })
	// Retained: a client that comes later gets them at once.
	h.wait("the state", "lumen/kitchen/state", nil)
	later := newHA(t, broker)
	later.wait("the discovery, retained", "homeassistant/device/lumen_kitchen/config", nil)
	later.wait("the availability, retained", avail, nil)
	later.wait("the state, retained", "lumen/kitchen/state", nil)
	for _, topic := range []string{"homeassistant/device/lumen_kitchen/config", avail, "lumen/kitchen/state"} {
		if ms := later.all(topic); !ms[0].retained {
			t.Errorf("%s is not retained", topic)
		}
	}

	led := func() string {
		st, _ := request(t, nc, "lumen.kitchen.cmd.led", `{}`).Body["state"].(string)
		return st
	}
	get := func() (state string, brightness int) {
		m, err := nc.Request("lumen.kitchen.cmd.get", []byte(`{}`), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var g struct {
			State      string
			Brightness int
		}
		_ = json.Unmarshal(m.Data, &g)
		return g.State, g.Brightness
	}
	// The commands of the light entity.
	h.send("lumen/kitchen/set", `{"state":"ON"}`)
	lumentest.WaitFor(t, 10*time.Second, "the LED on", func() bool { return led() != "off" })
	h.wait("state ON", "lumen/kitchen/state", func(p string) bool { return decodeState(t, p).State == "ON" })
	if by := lastBy(t, jsOf(t, d.URL), "kitchen"); by != "homeassistant" {
		t.Errorf("a command of Home Assistant is journaled by %q", by)
	}
	h.send("lumen/kitchen/set", `{"state":"ON","brightness":128}`)
	lumentest.WaitFor(t, 10*time.Second, "brightness 50%", func() bool { _, b := get(); return b == 50 })
	h.wait("brightness 128", "lumen/kitchen/state", func(p string) bool { return decodeState(t, p).Brightness == 128 })
	h.send("lumen/kitchen/set", `{"state":"ON","color":{"r":255,"g":0,"b":255}}`)
	h.wait("magenta", "lumen/kitchen/state", func(p string) bool {
		s := decodeState(t, p)
		return s.Color != nil && s.Color.R == 255 && s.Color.B == 255
	})
	if st, _ := get(); st != "color" {
		t.Errorf("after a color the light is in %s", st)
	}
	h.send("lumen/kitchen/set", `{"state":"ON","color_temp":2700}`)
	// Told back as the temperature asked for, so that Home Assistant
	// shows its temperature slider, not the color wheel.
	h.wait("warm white", "lumen/kitchen/state", func(p string) bool {
		s := decodeState(t, p)
		return s.ColorMode == "color_temp" && s.ColorTemp == 2700 && s.Color == nil
	})
	h.send("lumen/kitchen/set", `{"effect":"green"}`)
	lumentest.WaitFor(t, 10*time.Second, "the green effect", func() bool { st, _ := get(); return st == "green" })
	h.wait("effect green", "lumen/kitchen/state", func(p string) bool { s := decodeState(t, p); return s.Effect != nil && *s.Effect == "green" })
	// A transition: only its final values are published.
	h.forget("lumen/kitchen/state")
	h.send("lumen/kitchen/set", `{"state":"OFF","transition":2}`)
	h.wait("state OFF", "lumen/kitchen/state", func(p string) bool { return decodeState(t, p).State == "OFF" })
	time.Sleep(2500 * time.Millisecond)
	if ms := h.all("lumen/kitchen/state"); len(ms) != 1 {
		t.Errorf("a 2 s transition published %d states, want only its end: %v", len(ms), ms)
	}
	// Garbage is refused with nothing changed, and the state published
	// again (Home Assistant shows what is true).
	h.forget("lumen/kitchen/state")
	h.send("lumen/kitchen/set", `{"state":"SIDEWAYS"}`)
	h.wait("the state again", "lumen/kitchen/state", func(p string) bool { return decodeState(t, p).State == "OFF" })
	if !lumentest.Within(5*time.Second, func() bool { return strings.Contains(d.Logs(), "neither ON nor OFF") }) {
		t.Errorf("a bad command is not logged:\n%s", d.Logs())
	}

	// A gesture of the button: one event.
	for _, e := range []string{"down", "up"} {
		request(t, nc, "lumen.kitchen.cmd.button", `{"edge":"`+e+`"}`)
		time.Sleep(80 * time.Millisecond)
	}
	h.wait("the click event", "lumen/kitchen/event", func(p string) bool { return p == `{"event_type":"click"}` })
	h.wait("the click trigger", "lumen/kitchen/button", func(p string) bool { return p == "click" })
	time.Sleep(500 * time.Millisecond)
	if n := len(h.all("lumen/kitchen/event")); n != 1 {
		t.Errorf("one click published %d events", n)
	}

	// A new state is a new effect.
	request(t, nc, "lumen.kitchen.cmd.create_state", `{"name":"party","r":255,"g":0,"b":128}`)
	h.wait("party in the effects", "homeassistant/device/lumen_kitchen/config", func(p string) bool { return strings.Contains(p, `"party"`) })

	// Home Assistant → Lumen: a source on its broker sets a variable.
	mustOK(t, request(t, nc, "lumen.kitchen.cmd.create_source", `{"name":"outdoor","type":"mqtt","broker":"ha","topic":"homeassistant/sensor/+/state","store":{"outdoor":"result"}}`))
	lumentest.WaitFor(t, 20*time.Second, "the outdoor temperature from Home Assistant's broker", func() bool {
		h.send("homeassistant/sensor/outdoor_temp/state", "21.5")
		m, err := nc.Request("lumen.kitchen.cmd.get", []byte(`{}`), 5*time.Second)
		return err == nil && strings.Contains(string(m.Data), `"outdoor":21.5`)
	})

	// Home Assistant restarts: everything is published again.
	h.forget("homeassistant/device/lumen_kitchen/config")
	h.send("homeassistant/status", "online")
	h.wait("discovery after the birth message", "homeassistant/device/lumen_kitchen/config", nil)

	// The broker loses its store and comes back: everything again.
	broker.Stop()
	h.forget("homeassistant/device/lumen_kitchen/config")
	h.forget(avail)
	broker.Start()
	h.wait("discovery after the broker's restart", "homeassistant/device/lumen_kitchen/config", nil)
	h.wait("online after the broker's restart", avail, func(p string) bool { return p == "online" })
	lumentest.WaitFor(t, 10*time.Second, "the loss and the reconnection said", func() bool {
		return strings.Count(d.Logs(), "ha: lost the broker at") == 1 && strings.Contains(d.Logs(), "ha: connected to the broker at")
	})

	// SIGKILL: the last will says offline; back, online.
	d.Kill()
	h.wait("offline by the last will", avail, func(p string) bool { return p == "offline" })
	d = startDaemon(t, dir, args...)
	h.wait("online again", avail, func(p string) bool { return p == "online" })

	// The light no longer runs here: its discovery is cleared.
	_ = d.Stop()
	h.forget("homeassistant/device/lumen_kitchen/config")
	startDaemon(t, dir, "--light", "hall", "--hardware", "sim", "--ha-mqtt", broker.URL())
	h.wait("the hall's discovery", "homeassistant/device/lumen_hall/config", nil)
	h.waitCleared("the kitchen's discovery cleared", "homeassistant/device/lumen_kitchen/config")
}

// A broker that refuses the credentials: one sentence saying so, and
// the light runs on.
func TestHomeAssistantWrongPassword(t *testing.T) {
	t.Parallel()
	broker := lumentest.StartMosquitto(t, "homeassistant", "right")
	d := startDaemon(t, t.TempDir(), "--hardware", "sim", "--ha-mqtt", broker.URL(), "--ha-user", "homeassistant", "--ha-password", "wrong")
	lumentest.WaitFor(t, 20*time.Second, "the refusal said", func() bool { return strings.Contains(d.Logs(), "refused the user and password") })
	if n := strings.Count(d.Logs(), "refused the user and password"); n != 1 {
		t.Errorf("the refusal is said %d times:\n%s", n, d.Logs())
	}
	if out, code := runCLI(t, d.URL, "fire", "button_click"); code != 0 {
		t.Errorf("the light does not run on: %s", out)
	}
}

// A source on Home Assistant's broker needs the bridge: refused, with
// how to start it, and nothing journaled.
func TestHomeAssistantSourceNeedsTheBroker(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--hardware", "sim")
	nc := connect(t, d.URL)
	r := request(t, nc, "lumen.demo.cmd.create_source", `{"name":"outdoor","type":"mqtt","broker":"ha","topic":"homeassistant/sensor/x/state","fires":"x"}`)
	if r.Code != "409" || !strings.Contains(r.Header, "--ha-mqtt") {
		t.Errorf("a source on Home Assistant's broker without one: %s %s", r.Code, r.Raw)
	}
	r = request(t, nc, "lumen.demo.cmd.create_source", `{"name":"outdoor","type":"mqtt","broker":"zigbee","topic":"a/b","fires":"x"}`)
	if r.Code != "400" || !strings.Contains(r.Header, "unknown broker") {
		t.Errorf("an unknown broker: %s %s", r.Code, r.Raw)
	}
}

// At a hub, the whole house: each Pi's lights as devices of their own,
// driven through the hub, each unavailable while its Pi is away.
func TestHomeAssistantAtAHub(t *testing.T) {
	t.Parallel()
	broker := lumentest.StartMosquitto(t, "", "")
	h := newHA(t, broker)
	hubData := t.TempDir()
	credsA := addPi(t, hubData, "pia", "kitchen")
	credsB := addPi(t, hubData, "pib", "porch")
	credsC := addPi(t, hubData, "pic", "hall")
	hub := lumentest.StartHub(t, hubData, "--ha-mqtt", broker.URL())
	dirA := t.TempDir() // Pi A's, kept: the hub knows a Pi by its machine
	a := startDaemon(t, dirA, "--light", "kitchen", "--hub", "tls://"+hub.Leaf, "--creds", credsA)
	b := startPi(t, hub.Leaf, credsB, "--light", "porch")
	// Pi C publishes its light to Home Assistant itself.
	c := startPi(t, hub.Leaf, credsC, "--light", "hall", "--ha-mqtt", broker.URL())
	for _, l := range []string{"kitchen", "porch", "hall"} {
		h.wait(l+"'s device", "homeassistant/device/lumen_"+l+"/config", nil)
	}
	var cfg struct {
		Availability     []struct{ Topic string }
		AvailabilityMode string `json:"availability_mode"`
	}
	if err := json.Unmarshal([]byte(h.last("homeassistant/device/lumen_porch/config")), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Availability) != 2 || cfg.Availability[1].Topic != "lumen/node/pib/availability" || cfg.AvailabilityMode != "all" {
		t.Fatalf("the porch's availability: %+v", cfg)
	}
	for _, node := range []string{"lumen-hub", "pia", "pib"} {
		h.wait(node+" online", "lumen/node/"+node+"/availability", func(p string) bool { return p == "online" })
	}
	// A command from Home Assistant reaches Pi B's light through the hub.
	nc := connect(t, hub.URL)
	h.send("lumen/porch/set", `{"state":"ON","color":{"r":0,"g":0,"b":255}}`)
	lumentest.WaitFor(t, 20*time.Second, "the porch blue", func() bool {
		m, err := nc.Request("lumen.porch.cmd.get", []byte(`{}`), 5*time.Second)
		return err == nil && strings.Contains(string(m.Data), `"state":"color"`)
	})
	h.wait("the porch's state", "lumen/porch/state", func(p string) bool { s := decodeState(t, p); return s.Color != nil && s.Color.B == 255 })
	if by := lastBy(t, jsOf(t, b.URL), "porch"); by != "homeassistant" {
		t.Errorf("the porch's command from Home Assistant is journaled by %q", by)
	}

	// The hall is Pi C's: the hub leaves it alone, so its device keeps
	// Pi C's availability only and a command is carried out once.
	lumentest.WaitFor(t, 20*time.Second, "the hub to leave pic's lights to it", func() bool {
		return strings.Contains(hub.Logs(), "Pi pic publishes its lights to Home Assistant itself")
	})
	var hall struct{ Availability []struct{ Topic string } }
	if err := json.Unmarshal([]byte(h.last("homeassistant/device/lumen_hall/config")), &hall); err != nil {
		t.Fatal(err)
	}
	if len(hall.Availability) != 1 || hall.Availability[0].Topic != "lumen/node/pic/availability" {
		t.Errorf("the hall's availability: %+v", hall)
	}
	hallNC := connect(t, c.URL)
	h.send("lumen/hall/set", `{"state":"ON","brightness":128}`)
	lumentest.WaitFor(t, 20*time.Second, "the hall at 50%", func() bool {
		m, err := hallNC.Request("lumen.hall.cmd.get", []byte(`{}`), 5*time.Second)
		return err == nil && strings.Contains(string(m.Data), `"brightness":50`)
	})
	time.Sleep(time.Second) // a second bridge's copy would have landed by now
	if n := inputsBy(t, jsOf(t, c.URL), "hall", messages.WhoHomeAssistant); n != 1 {
		t.Errorf("one command from Home Assistant made %d inputs on the hall", n)
	}
	// Pi B goes away: its light is unavailable, Pi A's is not.
	b.Kill()
	h.wait("pib offline", "lumen/node/pib/availability", func(p string) bool { return p == "offline" })
	if p := h.last("lumen/node/pia/availability"); p != "online" {
		t.Errorf("pia is %q", p)
	}
	// Pi B leaves the house: its light leaves Home Assistant.
	if out, code := runCLI(t, "", "hub", "pi", "rm", "pib", "--data", hubData); code != 0 {
		t.Fatalf("hub pi rm: %s", out)
	}
	h.waitCleared("the porch's device removed", "homeassistant/device/lumen_porch/config")

	// The hub restarts, and Pi A goes away while it is down. Until the
	// hub has looked at the house it does not know which lights left, so
	// it removes none (Home Assistant would lose their entities'
	// settings); Pi A is said to be away, the hall stays Pi C's, and the
	// kitchen is announced again once Pi A is back.
	for _, topic := range []string{"homeassistant/device/lumen_kitchen/config", "homeassistant/device/lumen_hall/config", "lumen/node/pia/availability", "lumen/node/pic/availability"} {
		h.forget(topic)
	}
	hub.Kill()
	h.wait("the hub offline", "lumen/node/lumen-hub/availability", func(p string) bool { return p == "offline" })
	a.Kill()
	hub = lumentest.StartHub(t, hubData, "--ha-mqtt", broker.URL(), "--leaf-listen", hub.Leaf)
	h.wait("the hub online again", "lumen/node/lumen-hub/availability", func(p string) bool { return p == "online" })
	h.wait("pia said to be away", "lumen/node/pia/availability", func(p string) bool { return p == "offline" })
	lumentest.WaitFor(t, 30*time.Second, "the restarted hub to see pic's lights", func() bool {
		return strings.Contains(hub.Logs(), "Pi pic publishes its lights to Home Assistant itself")
	})
	startDaemon(t, dirA, "--light", "kitchen", "--hub", "tls://"+hub.Leaf, "--creds", credsA)
	if !lumentest.Within(20*time.Second, func() bool { return h.last("lumen/node/pia/availability") == "online" }) {
		t.Fatalf("pia is not said to be back (%q):\n%s", h.last("lumen/node/pia/availability"), hub.Logs())
	}
	if !lumentest.Within(20*time.Second, func() bool { return h.last("homeassistant/device/lumen_kitchen/config") != "" }) {
		t.Fatalf("the kitchen is not announced again:\n%s", hub.Logs())
	}
	for _, topic := range []string{"homeassistant/device/lumen_kitchen/config", "homeassistant/device/lumen_hall/config"} {
		for _, m := range h.all(topic) {
			if m.payload == "" {
				t.Errorf("%s was cleared when the hub restarted", topic)
			}
		}
	}
	// Pi C's availability is its own: the hub, which could not tell at its
	// start whose the hall was, said nothing of it.
	for _, m := range h.all("lumen/node/pic/availability") {
		if m.payload != "online" {
			t.Errorf("pic's availability became %q when the hub restarted", m.payload)
		}
	}
}

// A broker away at the start: lumen runs on, says so once, and shows the
// lights as soon as it comes. A broker that does not speak TLS on an
// mqtts:// URL: one sentence saying it is TLS.
func TestHomeAssistantBrokerFaults(t *testing.T) {
	t.Parallel()
	broker := lumentest.StartMosquitto(t, "", "")
	broker.Stop()
	d := startDaemon(t, t.TempDir(), "--hardware", "sim", "--ha-mqtt", broker.URL())
	lumentest.WaitFor(t, 20*time.Second, "the broker's absence said", func() bool { return strings.Contains(d.Logs(), "no MQTT broker answers at") })
	if out, code := runCLI(t, d.URL, "fire", "button_click"); code != 0 {
		t.Errorf("the light does not run on: %s", out)
	}
	broker.Start()
	h := newHA(t, broker)
	h.wait("the demo's discovery once the broker came", "homeassistant/device/lumen_demo/config", nil)
	if n := strings.Count(d.Logs(), "no MQTT broker answers at"); n != 1 {
		t.Errorf("the broker's absence is said %d times:\n%s", n, d.Logs())
	}

	tlsd := startDaemon(t, t.TempDir(), "--hardware", "sim", "--ha-mqtt", "mqtts://"+broker.Addr)
	if !lumentest.Within(30*time.Second, func() bool { return strings.Contains(tlsd.Logs(), "TLS with the broker at") }) {
		t.Fatalf("a plain broker on mqtts:// is not said to fail TLS:\n%s", tlsd.Logs())
	}
}
