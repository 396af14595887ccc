package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/journal"
)

// A house on loopback: one hub, Pis that join it, every light driven
// through the hub only.

// addPi registers a Pi at the hub of hubData and returns its creds file.
func addPi(t *testing.T, hubData, name string, lights ...string) string {
	t.Helper()
	creds := filepath.Join(t.TempDir(), name+".creds")
	args := []string{"hub", "pi", "add", name, "--data", hubData, "--out", creds}
	for _, l := range lights {
		args = append(args, "--light", l)
	}
	if out, code := runCLI(t, "", args...); code != 0 {
		t.Fatalf("lumen %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return creds
}

// startPi runs lumen up for a Pi of the house.
func startPi(t *testing.T, leaf, creds string, args ...string) *daemon {
	t.Helper()
	return startDaemon(t, t.TempDir(), append(args, "--hub", "tls://"+leaf, "--creds", creds)...)
}

// waitLights waits until discovery at the hub finds lights.
func waitLights(t *testing.T, hubURL string, lights ...string) {
	t.Helper()
	slices.Sort(lights)
	lumentest.WaitFor(t, 30*time.Second, "the lights "+strings.Join(lights, ", ")+" at the hub", func() bool {
		out, _ := runCLI(t, hubURL, "ls")
		for _, l := range lights {
			if !strings.Contains(out, "\n"+l+" ") {
				return false
			}
		}
		return true
	})
}

// seqs are the sequences of light's events in js's journal (a Pi's LUMEN,
// or at the hub the house stream, by origin).
func seqs(t *testing.T, js jetstream.JetStream, light string) []uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	j, err := house.OpenJournal(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	if err := j.Replay(ctx, "lumen."+light+".evt.>", 0, 0, func(m journal.Msg) error {
		out = append(out, m.Seq)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func jsOf(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// waitHouse waits until the house stream holds light's events exactly as
// the Pi's journal does: each once, in order, none missing.
func waitHouse(t *testing.T, hub, pi jetstream.JetStream, light string) {
	t.Helper()
	var want, got []uint64
	if !lumentest.Within(60*time.Second, func() bool {
		want, got = seqs(t, pi, light), seqs(t, hub, light)
		return slices.Equal(want, got)
	}) {
		t.Fatalf("the house stream has %d events of %s, the Pi's journal %d:\nhouse %v\npi    %v", len(got), light, len(want), got, want)
	}
}

func TestHouse(t *testing.T) {
	t.Parallel()
	hubData := t.TempDir()
	credsA := addPi(t, hubData, "pia", "kitchen", "hall")
	credsB := addPi(t, hubData, "pib", "porch")
	hub := lumentest.StartHub(t, hubData, "--http", "127.0.0.1:0")
	a := startPi(t, hub.Leaf, credsA, "--light", "kitchen", "--light", "hall", "--group", "down=hall")
	b := startPi(t, hub.Leaf, credsB, "--light", "porch", "--group", "down=porch")
	waitLights(t, hub.URL, "kitchen", "hall", "porch")

	// Discovery, commands, the fleet and groups across Pis, at the hub.
	if out := natsCLI(t, hub.URL, "micro", "ls"); strings.Count(out, "Lumen light") != 3 {
		t.Errorf("nats micro ls at the hub:\n%s", out)
	}
	for _, l := range []string{"hall", "porch"} {
		if out, code := runCLI(t, hub.URL, "fire", "button_click", "--light", l); code != 0 || !strings.Contains(out, "off → red") {
			t.Fatalf("fire %s at the hub: exit %d\n%s", l, code, out)
		}
	}
	if out := natsCLI(t, hub.URL, "req", "lumen.fleet.cmd.set_state", `{"name":"green"}`, "--replies", "0", "--timeout", "2s"); strings.Count(out, `"ok":true`) != 3 {
		t.Errorf("a fleet set_state at the hub: want 3 replies:\n%s", out)
	}
	if by := lastBy(t, jsOf(t, b.URL), "porch"); by != "fleet" {
		t.Errorf("a fleet command at the hub is journaled by %q, want fleet", by)
	}
	if out := natsCLI(t, hub.URL, "req", "lumen.group.down.cmd.get", `{}`, "--replies", "0", "--timeout", "2s"); strings.Count(out, `"ok":true`) != 2 ||
		!strings.Contains(out, `"light":"hall"`) || !strings.Contains(out, `"light":"porch"`) {
		t.Errorf("group down spans both Pis: want hall and porch:\n%s", out)
	}
	// A Pi cannot reach another Pi's light.
	if out, code := runCLI(t, a.URL, "fire", "button_click", "--light", "porch"); code == 0 {
		t.Errorf("Pi A fired porch: %s", out)
	}
	if out, code := runCLI(t, a.URL, "state", "off", "--light", "fleet"); code != 0 || strings.Contains(out, "porch") {
		t.Errorf("a fleet command on Pi A's server reaches its own lights only:\n%s", out)
	}
	if out, _ := runCLI(t, hub.URL, "state", "--light", "porch"); strings.TrimSpace(out) != "green" {
		t.Errorf("porch changed: %s", out)
	}
	// An everyday command said to a light of Pi A, with no model, goes
	// through the hub to Pi B's porch, journaled by Pi A.
	if out, code := runCLI(t, a.URL, "ask", "--light", "kitchen", "turn off the porch light"); code != 0 || !strings.Contains(out, "porch: off.") {
		t.Errorf("ask kitchen to turn off the porch: exit %d\n%s", code, out)
	}
	if out, _ := runCLI(t, hub.URL, "state", "--light", "porch"); strings.TrimSpace(out) != "off" {
		t.Errorf("porch after the ask: %s", out)
	}
	if by := lastBy(t, jsOf(t, b.URL), "porch"); !strings.HasPrefix(by+":", "pi:pia:") {
		t.Errorf("the porch turned off from Pi A is journaled by %q, want pi:pia", by)
	}
	// A Pi's journal holds its own lights only.
	if s, err := jsOf(t, b.URL).Stream(context.Background(), "LUMEN"); err != nil || !slices.Equal(s.CachedInfo().Config.Subjects, []string{"lumen.porch.evt.>"}) {
		t.Errorf("Pi B's journal takes %v (%v)", s.CachedInfo().Config.Subjects, err)
	}

	// The house stream: every event of every light once, in order.
	hubJS := jsOf(t, hub.URL)
	waitHouse(t, hubJS, jsOf(t, a.URL), "hall")
	waitHouse(t, hubJS, jsOf(t, a.URL), "kitchen")
	waitHouse(t, hubJS, jsOf(t, b.URL), "porch")
	for _, l := range []string{"hall", "porch"} {
		if out, code := runCLI(t, hub.URL, "replay", "--light", l, "--verify", "--quiet"); code != 0 || !strings.Contains(out, "every recorded output matches") {
			t.Errorf("replay --verify %s at the hub: exit %d\n%s", l, code, out)
		}
	}
	// The whole house, live, at the hub.
	tail := exec.Command(lumentest.Bin(t), "tail", "--light", "*", "--server", hub.URL)
	var out lumentest.Buffer
	tail.Stdout, tail.Stderr = &out, &out
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tail.Process.Kill(); _ = tail.Wait() }()
	lumentest.WaitFor(t, 10*time.Second, "tail to follow", func() bool { return strings.Contains(out.String(), "following") })
	runCLI(t, hub.URL, "fire", "button_hold", "--light", "fleet")
	lumentest.WaitFor(t, 10*time.Second, "tail at the hub to show every light", func() bool {
		s := out.String()
		return strings.Contains(s, " kitchen out state") && strings.Contains(s, " hall out state") && strings.Contains(s, " porch out state")
	})

	// The page and API of the whole house, at the hub.
	page := hub.Page(t)
	res, err := http.Get(page + "api/v1/lights")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, l := range []string{"kitchen", "hall", "porch"} {
		if !strings.Contains(string(body), `"light":"`+l+`"`) {
			t.Errorf("GET /api/v1/lights at the hub lacks %s: %s", l, body)
		}
	}
	res, err = http.Post(page+"api/v1/lights/porch/fire", "application/json", strings.NewReader(`{"transition":"button_click"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"ok":true`) {
		t.Errorf("fire porch through the hub's API: %d %s", res.StatusCode, body)
	}
	events, err := http.Get(page + "api/v1/lights/porch/events?since=0")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(events.Body)
	var first string
	for first == "" && sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			first = id
		}
	}
	events.Body.Close()
	if first != "1" && first != "2" {
		t.Errorf("the house's events of porch at the hub start at %q, want the Pi's first sequences", first)
	}
	// Live, at the hub: a new event of porch comes, with porch's own
	// sequence.
	live, err := http.Get(page + "api/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(live.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `"light":"porch"`) {
				got <- sc.Text()
				return
			}
		}
	}()
	// The stream goes live once it has read the house's history, which
	// it does not send: a click before then may fall in it, so the
	// clicks go on until one comes live.
	if !lumentest.Within(20*time.Second, func() bool {
		runCLI(t, hub.URL, "fire", "button_click", "--light", "porch")
		select {
		case <-got:
			return true
		case <-time.After(time.Second):
			return false
		}
	}) {
		t.Error("no live event of porch from the hub's /api/v1/events")
	}
	live.Body.Close()

	// pi ls: both connected, the house caught up.
	lumentest.WaitFor(t, 10*time.Second, "pi ls to show both Pis connected", func() bool {
		out, _ := runCLI(t, "", "hub", "pi", "ls", "--data", hubData)
		return strings.Count(out, "connected since") == 2 && !strings.Contains(out, "disconnected")
	})
}

// The hub killed while a Pi works: the Pi's lights answer on its own
// server, nothing is lost, and after the hub is back the house stream
// has every event once.
func TestHouseHubKilled(t *testing.T) {
	t.Parallel()
	hubData, leaf := t.TempDir(), lumentest.FreeAddr(t)
	creds := addPi(t, hubData, "pia", "kitchen")
	hub := lumentest.StartHub(t, hubData, "--leaf-listen", leaf)
	a := startPi(t, hub.Leaf, creds, "--light", "kitchen", "--sync", "batch")
	waitLights(t, hub.URL, "kitchen")
	hub.Kill()
	nc := connect(t, a.URL)
	for i := range 500 {
		if r := request(t, nc, "lumen.kitchen.cmd.fire", `{"transition":"button_click"}`); r.Code != "" {
			t.Fatalf("fire %d with the hub down: %s", i, r.Raw)
		}
	}
	hub = lumentest.StartHub(t, hubData, "--leaf-listen", leaf)
	waitHouse(t, jsOf(t, hub.URL), jsOf(t, a.URL), "kitchen")
	if n := len(seqs(t, jsOf(t, hub.URL), "kitchen")); n < 1000 {
		t.Errorf("the house has %d events of kitchen, want at least the 500 fires' inputs and outputs", n)
	}
}

// A Pi killed and restarted: the other lights answer meanwhile, its
// lights resume, and the house stream has no gap.
func TestHousePiKilled(t *testing.T) {
	t.Parallel()
	hubData := t.TempDir()
	credsA := addPi(t, hubData, "pia", "kitchen")
	credsB := addPi(t, hubData, "pib", "porch")
	hub := lumentest.StartHub(t, hubData)
	dataA := t.TempDir()
	a := startDaemon(t, dataA, "--light", "kitchen", "--hub", "tls://"+hub.Leaf, "--creds", credsA)
	startPi(t, hub.Leaf, credsB, "--light", "porch")
	waitLights(t, hub.URL, "kitchen", "porch")
	runCLI(t, hub.URL, "fire", "button_click", "--light", "kitchen")
	a.Kill()
	lumentest.WaitFor(t, 30*time.Second, "pi ls to say pia is disconnected", func() bool {
		out, _ := runCLI(t, "", "hub", "pi", "ls", "--data", hubData)
		return strings.Contains(out, "pia  kitchen  disconnected since")
	})
	if out, code := runCLI(t, hub.URL, "fire", "button_click", "--light", "porch"); code != 0 {
		t.Fatalf("porch while pia is down: exit %d\n%s", code, out)
	}
	a = startDaemon(t, dataA, "--light", "kitchen", "--hub", "tls://"+hub.Leaf, "--creds", credsA)
	waitLights(t, hub.URL, "kitchen")
	if out, code := runCLI(t, hub.URL, "fire", "button_click", "--light", "kitchen"); code != 0 || !strings.Contains(out, "red → green") {
		t.Fatalf("kitchen after its Pi restarted: exit %d\n%s", code, out)
	}
	waitHouse(t, jsOf(t, hub.URL), jsOf(t, a.URL), "kitchen")
}

// What refuses to join, and says why: creds for lights the Pi does not
// run; a hub whose certificate another house's CA signed; a Pi removed.
func TestHouseRefusals(t *testing.T) {
	t.Parallel()
	hubData := t.TempDir()
	creds := addPi(t, hubData, "pia", "kitchen")
	hub := lumentest.StartHub(t, hubData)

	out, code := runCLI(t, "", "up", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--light", "hall", "--hub", "tls://"+hub.Leaf, "--creds", creds)
	if code != 1 || !strings.Contains(out, "--light hall: the creds of Pi pia allow kitchen only") {
		t.Errorf("a light the creds do not list: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, "", "hub", "pi", "add", "pib", "--light", "kitchen", "--data", hubData, "--out", filepath.Join(t.TempDir(), "x")); code != 2 || !strings.Contains(out, "light kitchen is Pi pia's already") {
		t.Errorf("a light another Pi runs: exit %d\n%s", code, out)
	}
	// Creds of another house: its CA did not sign this hub.
	other := addPi(t, t.TempDir(), "pia", "kitchen")
	stranger := startPi(t, hub.Leaf, other, "--light", "kitchen")
	lumentest.WaitFor(t, 20*time.Second, "the Pi to say the certificate is not its house's", func() bool {
		return strings.Contains(stranger.Logs(), "the hub's certificate is not the house CA's of these creds")
	})
	// A removed Pi can no longer connect.
	pi := startPi(t, hub.Leaf, creds, "--light", "kitchen")
	lumentest.WaitFor(t, 20*time.Second, "pia to join", func() bool { return strings.Contains(pi.Logs(), "joined the house") })
	if out, code := runCLI(t, "", "hub", "pi", "rm", "pia", "--data", hubData); code != 0 {
		t.Fatalf("pi rm: exit %d\n%s", code, out)
	}
	lumentest.WaitFor(t, 20*time.Second, "the removed Pi to be refused", func() bool {
		return strings.Contains(pi.Logs(), "the hub refuses these creds")
	})
	if out, code := runCLI(t, pi.URL, "state", "--light", "kitchen"); code != 0 {
		t.Errorf("the removed Pi's light works alone: exit %d\n%s", code, out)
	}
}

// The creds file is the Pi's secret, readable by its owner only, and
// says what it holds.
func TestHouseCredsFile(t *testing.T) {
	t.Parallel()
	creds := addPi(t, t.TempDir(), "pia", "kitchen", "hall")
	fi, err := os.Stat(creds)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("creds mode %v (%v)", fi.Mode(), err)
	}
	b, _ := os.ReadFile(creds)
	var c house.Creds
	if err := json.Unmarshal(b, &c); err != nil || c.Pi != "pia" || !slices.Equal(c.Lights, []string{"kitchen", "hall"}) || !strings.HasPrefix(c.Seed, "SU") || !strings.Contains(c.CA, "BEGIN CERTIFICATE") {
		t.Fatalf("creds: %+v (%v)", c, err)
	}
}

// A Pi whose hub is away keeps in its journal what the house has not
// copied, past the point where it would compact alone; only when the
// journal is nearly full does it purge them, and then it journals a gap
// event saying which the house will never have. The hub, back, copies
// the rest, the gap event with it.
func TestHouseRetention(t *testing.T) {
	t.Parallel()
	const budget = 200_000
	hubData, leaf := t.TempDir(), lumentest.FreeAddr(t)
	creds := addPi(t, hubData, "pia", "dur")
	dir := t.TempDir()
	a := startDaemon(t, dir, "--light", "dur", "--sync", "batch", "--max-bytes", "200000", "--snapshot-every", "20",
		"--hub", "tls://"+leaf, "--creds", creds)
	nc := connect(t, a.URL)
	mustOK(t, request(t, nc, "lumen.dur.cmd.apply", durConfig))
	js := jsOf(t, a.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	held := false // the journal passed 3/4 of its budget with nothing purged
	var gap map[string]any
	for i := 0; gap == nil; i++ {
		if i == 3000 {
			t.Fatal("3000 fires and no gap event")
		}
		mustOK(t, request(t, nc, "lumen.dur.cmd.fire", `{"transition":"tick"}`))
		if i%10 != 0 {
			continue
		}
		s, err := js.Stream(ctx, "LUMEN")
		if err != nil {
			t.Fatal(err)
		}
		st := s.CachedInfo().State
		if st.Bytes > budget*3/4+budget/32 && st.FirstSeq == 1 {
			held = true
		}
		if m, err := s.GetLastMsgForSubject(ctx, "lumen.dur.evt.out.gap"); err == nil {
			var env struct{ Data map[string]any }
			if err := json.Unmarshal(m.Data, &env); err != nil {
				t.Fatal(err)
			}
			gap = env.Data
		}
	}
	if !held {
		t.Error("the journal was compacted before it was nearly full, though the house had none of it")
	}
	if gap["from"] != float64(1) || gap["to"].(float64) < 100 || !strings.Contains(gap["reason"].(string), "nearly full") {
		t.Errorf("gap event %v", gap)
	}
	if !strings.Contains(a.Logs(), "the house does not have: the journal is nearly full") {
		t.Errorf("no log line about the gap:\n%s", a.Logs())
	}
	hub := lumentest.StartHub(t, hubData, "--leaf-listen", leaf)
	waitHouse(t, jsOf(t, hub.URL), js, "dur")
	if m, err := house.OpenJournal(ctx, jsOf(t, hub.URL)); err != nil {
		t.Fatal(err)
	} else if _, err := m.LastMsg(ctx, "lumen.dur.evt.out.gap"); err != nil {
		t.Errorf("the house has no gap event: %v", err)
	}
}
