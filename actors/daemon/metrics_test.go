package daemon_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/internal/metrics/metricstest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// GET /metrics on the HTTP port: behind the same Host check and
// credentials as the API; it counts a light's inputs, its snapshots'
// age (also one taken before the daemon started), the journal, and the
// supervisor's restarts of a light's actor.
func TestMetricsDoor(t *testing.T) {
	data := t.TempDir()
	const user, password = "ann", "s3cret"
	start := func() (*daemon.Daemon, string) {
		d, base := startWeb(t, func(c *daemon.Config) {
			c.Data, c.User, c.Password, c.SnapshotEvery = data, user, password, 2
		})
		return d, base + "/metrics"
	}
	d, url := start()
	for _, tc := range []struct {
		name           string
		host           string
		user, password string
		status         int
	}{
		{"no credentials", "", "", "", http.StatusUnauthorized},
		{"a wrong password", "", user, "nope", http.StatusUnauthorized},
		{"a rebound name", "evil.example", user, password, http.StatusMisdirectedRequest},
		{"the credentials", "", user, password, http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.password)
		}
		if status, b := post(t, req); status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, status, b, tc.status)
		}
	}

	scrape := func() metricstest.Scrape { return metricstest.Get(t, url, user, password) }
	before := scrape()
	inputs := before.Must(t, "lumen_light_inputs_total", "light", "a")
	nc, err := nats.Connect(d.URL(), nats.UserInfo(user, password))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := wire.New(nc)
	ctx := context.Background()
	for range 3 {
		if err := c.Call(ctx, "a", messages.VerbFire, messages.FireRequest{Transition: "button_click"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	after := scrape()
	if got := after.Must(t, "lumen_light_inputs_total", "light", "a"); got != inputs+3 {
		t.Errorf("inputs of a after 3 clicks: %v, want %v", got, inputs+3)
	}
	if got := after.Must(t, "lumen_light_inputs_total", "light", "b"); got != before.Must(t, "lumen_light_inputs_total", "light", "b") {
		t.Errorf("b's inputs moved with a's clicks")
	}
	if got := after.Must(t, "lumen_light_outputs_total", "light", "a"); got < before.Must(t, "lumen_light_outputs_total", "light", "a")+3 {
		t.Errorf("outputs of a after 3 state changes: %v", got)
	}
	if got := after.Must(t, "lumen_light_apply_seconds", "light", "a"); got != inputs+3 {
		t.Errorf("apply latencies observed: %v, want one per input (%v)", got, inputs+3)
	}
	// A snapshot every 2 inputs: one was just taken.
	if age := after.Must(t, "lumen_light_snapshot_age_seconds", "light", "a"); age < 0 || age > 60 {
		t.Errorf("snapshot age of a: %v s", age)
	}
	if msgs := after.Must(t, "lumen_journal_messages"); msgs < 3 || after.Must(t, "lumen_journal_bytes") <= 0 {
		t.Errorf("journal: %v messages, %v bytes", msgs, after.Must(t, "lumen_journal_bytes"))
	}
	if _, ok := after.Value("lumen_actor_restarts_total", "light", "a"); ok {
		t.Errorf("a restart counted before any crash")
	}

	// The light's consumer deleted under it: the supervisor restarts it.
	if err := d.JetStream().DeleteConsumer(ctx, "LUMEN", "light-a"); err != nil {
		t.Fatal(err)
	}
	lumentest.WaitFor(t, 30*time.Second, "the restart to be counted", func() bool {
		v, _ := scrape().Value("lumen_actor_restarts_total", "light", "a", "actor", "light")
		return v == 1
	})

	// Another start on the same data: the snapshot taken before it has
	// its age before the light takes a new one, and the counters start
	// again.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	_, url = start()
	s := scrape()
	if age, ok := s.Value("lumen_light_snapshot_age_seconds", "light", "b"); !ok || age < 0 || age > 600 {
		t.Errorf("after a restart, b's snapshot age: %v (found %v)", age, ok)
	}
	if _, ok := s.Value("lumen_actor_restarts_total", "light", "a"); ok {
		t.Errorf("restarts counted across a start of the daemon")
	}
}
