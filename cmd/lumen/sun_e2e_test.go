package main_test

import (
	"regexp"
	"strings"
	"testing"
)

// lumen schedule add --sun at the daemon's home, and schedule ls in
// words; without a home, the refusal says how to set one.
func TestSunScheduleCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--home", "48.85,2.35")
	if out, code := runCLI(t, d.URL, "schedule", "add", "wake", "--sun", "sunrise", "--offset", "-30m", "--fires", "wake"); code != 0 {
		t.Fatalf("schedule add --sun: exit %d\n%s", code, out)
	}
	out, code := runCLI(t, d.URL, "schedule", "ls")
	if code != 0 || !regexp.MustCompile(`(?m)^wake +sunrise -30m +48\.85,2\.35 +wake +\d{4}-\d\d-\d\d \d\d:\d\d `).MatchString(out) {
		t.Errorf("schedule ls: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "schedule", "add", "x", "--sun", "noon", "--fires", "x"); code != 1 || !strings.Contains(out, "use sunrise, sunset, dawn or dusk") {
		t.Errorf("--sun noon: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "schedule", "add", "x", "--cron", "0 7 * * *", "--sun", "sunset", "--fires", "x"); code != 2 {
		t.Errorf("--cron and --sun: exit %d\n%s", code, out)
	}

	bare := startDaemon(t, t.TempDir())
	if out, code := runCLI(t, bare.URL, "schedule", "add", "wake", "--sun", "sunrise", "--fires", "wake"); code != 1 || !strings.Contains(out, "lumen up --home LAT,LON") {
		t.Errorf("a sun schedule with no home: exit %d\n%s", code, out)
	}
}
