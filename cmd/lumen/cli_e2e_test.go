package main_test

import (
	"regexp"
	"strings"
	"testing"
)

// Which light a command is for: the only one running, $LUMEN_LIGHT, or
// --light; an unknown light's error lists the running ones; lumen ls
// shows them all; --light fleet and --group reach several, one line each.
func TestWhichLight(t *testing.T) {
	t.Parallel()
	one := startDaemon(t, t.TempDir(), "--light", "hall")
	if out, code := runCLI(t, one.URL, "fire", "button_click"); code != 0 || !strings.Contains(out, "off → red") {
		t.Fatalf("the only light, without --light: exit %d\n%s", code, out)
	}

	d := startDaemon(t, t.TempDir(), "--light", "kitchen", "--light", "hall", "--light", "porch", "--group", "down=kitchen,hall")
	if out, code := runCLI(t, d.URL, "state"); code != 2 || !strings.Contains(out, "3 lights are running (hall, kitchen, porch): say which with --light NAME (or $LUMEN_LIGHT)") {
		t.Errorf("several lights, none named: exit %d\n%s", code, out)
	}
	if out, code := runCLIEnv(t, d.URL, []string{"LUMEN_LIGHT=porch"}, "fire", "button_click"); code != 0 || !strings.Contains(out, "off → red") {
		t.Errorf("$LUMEN_LIGHT: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "state", "--light", "kichen"); code != 1 || !strings.Contains(out, `no light named "kichen" is running at `+d.URL+"; the running lights are hall, kitchen, porch") {
		t.Errorf("unknown light: exit %d\n%s", code, out)
	}
	out, code := runCLI(t, d.URL, "fire", "button_click", "--group", "down")
	if code != 0 || !regexp.MustCompile(`(?m)^hall +state +off → red`).MatchString(out) || !regexp.MustCompile(`(?m)^kitchen +state +off → red`).MatchString(out) || strings.Contains(out, "porch") {
		t.Errorf("--group down: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, d.URL, "fire", "button_click", "--light", "fleet")
	if code != 0 || strings.Count(out, "\n") != 3 || !regexp.MustCompile(`(?m)^porch +state +red → green`).MatchString(out) || !regexp.MustCompile(`(?m)^hall +state +red → green`).MatchString(out) {
		t.Errorf("--light fleet: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, d.URL, "ls")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 4 ||
		!regexp.MustCompile(`^LIGHT +STATE +COLOR +LAST INPUT +SOURCES +AGENT +GROUPS$`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^hall +green +#00ff00 +fired, \d+s ago +0 +off +down$`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^porch +green +#00ff00 +fired, \d+s ago +0 +off +-$`).MatchString(lines[3]) {
		t.Errorf("lumen ls: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "state", "nope", "--light", "fleet"); code != 1 || strings.Count(out, `error: state "nope" does not exist`) != 3 {
		t.Errorf("--light fleet refused by every light: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "get", "--light", "fleet"); code != 2 || !strings.Contains(out, "this command answers for one light") {
		t.Errorf("get for the fleet: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "fire", "x", "--group", "upstairs"); code != 1 || !strings.Contains(out, `no running light is in group "upstairs"`) {
		t.Errorf("an empty group: exit %d\n%s", code, out)
	}
}

// The model piece by piece: tables of states, rules and variables, and
// the rule, var and schedule verbs.
func TestModelCommands(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	cli := func(args ...string) string {
		t.Helper()
		out, code := runCLI(t, d.URL, args...)
		if code != 0 {
			t.Fatalf("lumen %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}
	if out := cli("states"); !regexp.MustCompile(`(?m)^\* +off +0 +0 +0 +- +-$`).MatchString(out) || !regexp.MustCompile(`(?m)^ +red +255 +0 +0 +- +plain red$`).MatchString(out) {
		t.Errorf("lumen states:\n%s", out)
	}
	if out := cli("rules"); !regexp.MustCompile(`(?m)^ID +FROM +ON +TO +CONDITION +ACTION +PRIORITY +ENABLED$`).MatchString(out) || !regexp.MustCompile(`(?m)^r5 +\* +button_hold +off +- +- +100 +yes$`).MatchString(out) {
		t.Errorf("lumen rules:\n%s", out)
	}
	if out := cli("rule", "add", "off", "button_double_click", "blue", "--if", "getData('n') > 2", "--do", "setData('n', 0)", "--priority", "5"); !strings.Contains(out, "config") {
		t.Errorf("lumen rule add:\n%s", out)
	}
	if out := cli("rules"); !regexp.MustCompile(`(?m)^r6 +off +button_double_click +blue +getData\('n'\) > 2 +setData\('n', 0\) +5 +yes$`).MatchString(out) {
		t.Errorf("the added rule:\n%s", out)
	}
	cli("rule", "disable", "r6")
	if out := cli("rules"); !regexp.MustCompile(`(?m)^r6 .* no$`).MatchString(out) {
		t.Errorf("r6 disabled:\n%s", out)
	}
	cli("rule", "enable", "r6")
	cli("rule", "rm", "r6")
	if out := cli("rules"); strings.Contains(out, "r6") {
		t.Errorf("r6 removed:\n%s", out)
	}
	if out, code := runCLI(t, d.URL, "rule", "rm"); code != 2 || !strings.Contains(out, "name the rules") {
		t.Errorf("rule rm without rules: exit %d\n%s", code, out)
	}
	cli("var", "set", "n", "3")
	cli("var", "set", "mode", "evening")
	cli("var", "set", "party", `{"colors":["red","blue"]}`)
	out := cli("vars")
	for _, row := range []string{`(?m)^n +3$`, `(?m)^mode +"evening"$`, `(?m)^party +\{"colors":\["red","blue"\]\}$`} {
		if !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("lumen vars lacks %s:\n%s", row, out)
		}
	}
	cli("var", "unset", "n")
	if out := cli("vars"); regexp.MustCompile(`(?m)^n `).MatchString(out) {
		t.Errorf("n unset:\n%s", out)
	}
	cli("schedule", "add", "evening", "--cron", "0 19 * * *", "--tz", "Europe/Paris", "--fires", "evening")
	// The next tick in the reader's local time.
	if out, _ := runCLIEnv(t, d.URL, []string{"TZ=Europe/Paris"}, "schedule", "ls"); !regexp.MustCompile(`(?m)^evening +0 19 \* \* \* +Europe/Paris +evening +20\d\d-\d\d-\d\d 19:00 CES?T$`).MatchString(out) {
		t.Errorf("lumen schedule ls:\n%s", out)
	}
	cli("schedule", "rm", "evening")
	if out := cli("schedule", "ls"); !strings.Contains(out, "has no schedules") {
		t.Errorf("schedule removed:\n%s", out)
	}
	if out, code := runCLI(t, d.URL, "schedule", "add", "fast", "--cron", "@every 100ms", "--fires", "x"); code != 1 || !strings.Contains(out, "at most once a second") {
		t.Errorf("a schedule too fast: exit %d\n%s", code, out)
	}
}
