package main_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A person types a light's name in any case, at the CLI and over HTTP;
// a name with a space is answered with the name to use, in a sentence
// without internal prefixes (issue 26, item 16).
func TestLightNamesAsTyped(t *testing.T) {
	d := startDaemon(t, t.TempDir(), "--light", "Kitchen", "--http", "127.0.0.1:0")
	if out, code := runCLI(t, d.URL, "--light", "KITCHEN", "state"); code != 0 || strings.TrimSpace(out) != "off" {
		t.Errorf("state --light KITCHEN: exit %d:\n%s", code, out)
	}
	out, code := runCLI(t, d.URL, "--light", "living room", "state")
	if code != 2 || !strings.Contains(out, "use living_room") || strings.Contains(out, "subject:") || strings.Contains(out, "invalid name") {
		t.Errorf("state --light 'living room': exit %d:\n%s", code, out)
	}
	api := d.Page(t) + "api/v1/lights/"
	for _, tc := range []struct {
		light string
		code  int
		body  string
	}{
		{"Kitchen", http.StatusOK, `"light":"kitchen"`},
		{"living%20room", http.StatusNotFound, "use living_room"},
	} {
		resp, err := http.Post(api+tc.light+"/get", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.body) {
			t.Errorf("POST %s/get: %d %s; want %d with %s", tc.light, resp.StatusCode, b, tc.code, tc.body)
		}
	}
}
