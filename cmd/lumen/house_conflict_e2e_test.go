package main_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// Two Pis started with the same creds: the hub keeps the first, never
// takes the second's journal or answers from it, says so once naming both
// addresses, and pi ls shows it; the second Pi's own log says why.
func TestHouseSameCreds(t *testing.T) {
	t.Parallel()
	hubData := t.TempDir()
	creds := addPi(t, hubData, "hallpi", "hall")
	hub := lumentest.StartHub(t, hubData)
	first := startPi(t, hub.Leaf, creds, "--light", "hall")
	lumentest.WaitFor(t, 20*time.Second, "the first Pi to join", func() bool { return strings.Contains(first.Logs(), "joined the house") })
	waitLights(t, hub.URL, "hall")
	if out, code := runCLI(t, hub.URL, "fire", "button_click", "--light", "hall"); code != 0 || !strings.Contains(out, "off → red") {
		t.Fatalf("fire hall at the hub: exit %d\n%s", code, out)
	}

	second := startPi(t, hub.Leaf, creds, "--light", "hall")
	// The second Pi's journal differs: two clicks on its own server.
	for range 2 {
		if out, code := runCLI(t, second.URL, "fire", "button_click", "--light", "hall"); code != 0 {
			t.Fatalf("fire on the second Pi: exit %d\n%s", code, out)
		}
	}
	lumentest.WaitFor(t, 30*time.Second, "the second Pi to say why the hub keeps it out", func() bool {
		return strings.Contains(second.Logs(), "each Pi needs its own creds")
	})
	if strings.Contains(second.Logs(), "joined the house") {
		t.Errorf("the second Pi says it joined:\n%s", second.Logs())
	}
	said := regexp.MustCompile(`pi hallpi connects from 127\.0\.0\.1:\d+ and 127\.0\.0\.1:\d+: each Pi needs its own creds: lumen hub pi add`)
	lumentest.WaitFor(t, 10*time.Second, "the hub to name both addresses", func() bool { return said.MatchString(hub.Logs()) })

	// For a while: the hub answers from the first Pi only, the first
	// stays joined, and the hub says it once.
	for range 6 {
		if out, _ := runCLI(t, hub.URL, "state", "--light", "hall"); strings.TrimSpace(out) != "red" {
			t.Fatalf("the hub answers for hall from the second Pi: %q", out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if n := len(said.FindAllString(hub.Logs(), -1)); n != 1 {
		t.Errorf("the hub said it %d times:\n%s", n, hub.Logs())
	}
	if strings.Contains(hub.Logs(), "Duplicate") || strings.Contains(first.Logs(), "not joined") {
		t.Errorf("the first Pi was pushed out:\nhub:\n%s\nfirst Pi:\n%s", hub.Logs(), first.Logs())
	}
	out, _ := runCLI(t, "", "hub", "pi", "ls", "--data", hubData)
	if !strings.Contains(out, "connected since") || !regexp.MustCompile(`refused a second Pi from 127\.0\.0\.1:\d+`).MatchString(out) {
		t.Errorf("pi ls does not show the conflict:\n%s", out)
	}
	// The house stream holds the first Pi's events of hall, and only
	// them.
	hubJS, firstJS := jsOf(t, hub.URL), jsOf(t, first.URL)
	waitHouse(t, hubJS, firstJS, "hall")
	if got, other := seqs(t, hubJS, "hall"), seqs(t, jsOf(t, second.URL), "hall"); slices.Equal(got, other) {
		t.Errorf("the house has the second Pi's journal: %v", got)
	}
}

// lumen ls at a hub lists the lights of a Pi that is gone as unreachable,
// with since when.
func TestHouseLsUnreachable(t *testing.T) {
	t.Parallel()
	hubData := t.TempDir()
	credsA := addPi(t, hubData, "pia", "kitchen")
	credsB := addPi(t, hubData, "pib", "porch")
	hub := lumentest.StartHub(t, hubData)
	a := startPi(t, hub.Leaf, credsA, "--light", "kitchen")
	startPi(t, hub.Leaf, credsB, "--light", "porch")
	waitLights(t, hub.URL, "kitchen", "porch")
	a.Kill()
	gone := regexp.MustCompile(`(?m)^kitchen +unreachable: its Pi pia is disconnected since \d\d:\d\d:\d\d \(\d+s ago\)`)
	var out string
	lumentest.WaitFor(t, 30*time.Second, "lumen ls to list kitchen as unreachable", func() bool {
		out, _ = runCLI(t, hub.URL, "ls")
		return gone.MatchString(out)
	})
	if !regexp.MustCompile(`(?m)^porch +off `).MatchString(out) {
		t.Errorf("lumen ls at the hub:\n%s", out)
	}
	// A Pi removed is no longer the house's.
	if out, code := runCLI(t, "", "hub", "pi", "rm", "pia", "--data", hubData); code != 0 {
		t.Fatalf("pi rm: exit %d\n%s", code, out)
	}
	lumentest.WaitFor(t, 10*time.Second, "lumen ls to forget kitchen", func() bool {
		out, _ = runCLI(t, hub.URL, "ls")
		return !strings.Contains(out, "kitchen")
	})
}
