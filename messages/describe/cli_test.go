package describe_test

import (
	"bytes"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

// TestCLILines pins the lumen command's lines word for word: scripts and
// the CLI's tests read them.
func TestCLILines(t *testing.T) {
	changes := messages.Changes{}
	tests := []struct {
		name, got, want string
	}{
		{"ready, bare", describe.DaemonReady("nats://127.0.0.1:4222", "desk", "", ""),
			"lumen: ready nats://127.0.0.1:4222\nlumen: watch it with: nats --server nats://127.0.0.1:4222 sub 'lumen.desk.evt.>'"},
		{"ready, every door", describe.DaemonReady("nats://h:1", "desk", "http://h:2", "h:3"),
			"lumen: ready nats://h:1\nlumen: watch it with: nats --server nats://h:1 sub 'lumen.desk.evt.>'\n" +
				"lumen: page http://h:2/\nlumen: webhooks on http://h:2/hooks/LIGHT/SOURCE\n" +
				"lumen: mqtt on mqtt://h:3 (topic home/doorbell is subject home.doorbell)"},
		{"hub ready", describe.HubReady("nats://h:1", "h:7422", ""), "lumen: hub ready nats://h:1 leaf h:7422"},
		{"hub ready with its page", describe.HubReady("nats://h:1", "h:7422", "https://h:8443"),
			"lumen: hub ready nats://h:1 leaf h:7422\nlumen: page https://h:8443/"},
		{"shutting down", describe.ShuttingDown(), "lumen: shutting down"},
		{"bad interval", describe.BadSourceMinInterval("x"),
			`lumen: LUMEN_SOURCE_MIN_INTERVAL_MS="x" is not a positive number of milliseconds; ignored`},
		{"pi added", describe.PiAdded("kitchen", []string{"desk", "hall"}, "/tmp/creds/kitchen.creds"),
			"registered Pi kitchen (lights desk, hall); its credentials are in /tmp/creds/kitchen.creds: copy them to the Pi and run\n" +
				"  lumen up --light desk --light hall --hub tls://HUB:7422 --creds kitchen.creds"},
		{"pi removed", describe.PiRemoved("kitchen"), "removed Pi kitchen: it can no longer connect; its history stays in the house stream"},
		{"no pis", describe.NoPis(), "no Pi yet: 'lumen hub pi add NAME --light LIGHT --out FILE' registers one"},
		{"following", describe.Following("lumen.*.evt.>", "nats://h:1"), "lumen: following lumen.*.evt.> on nats://h:1 (Ctrl-C to stop)"},
		{"following from the start", describe.FollowingFrom("lumen.desk.evt.>", 0, "nats://h:1"),
			"lumen: lumen.desk.evt.> from sequence 1, then live, on nats://h:1 (Ctrl-C to stop)"},
		{"following from 7", describe.FollowingFrom("lumen.desk.evt.>", 7, "nats://h:1"),
			"lumen: lumen.desk.evt.> from sequence 7, then live, on nats://h:1 (Ctrl-C to stop)"},
		{"light did nothing to say", describe.LightDid("desk", nil), "desk\tdone"},
		{"light failed", describe.LightFailed("desk", errors.New("no answer")), "desk\terror: no answer"},
		{"changed", describe.Changed(changes), "changed: " + changes.String()},
		{"dry run", describe.DryRun(changes), "dry run, nothing applied: " + changes.String()},
		{"webhook", describe.Webhook("door", "http://h:2/hooks/desk/door", "tok"),
			"webhook door: POST http://h:2/hooks/desk/door with the header Authorization: Bearer tok\n" +
				"  (the token is shown this once and kept only as a hash: save it now)"},
		{"webhook without HTTP", describe.Webhook("door", "", "tok"),
			"webhook door: POST (no HTTP: start lumen up with --http HOST:PORT) /hooks/LIGHT/door with the header Authorization: Bearer tok\n" +
				"  (the token is shown this once and kept only as a hash: save it now)"},
		{"no sources", describe.NoSources("desk"), "light desk has no data sources"},
		{"tool log", describe.ToolLog("fetched"), "log: fetched"},
		{"tool time", describe.ToolTime(12.345), "(12.3 ms)"},
		{"cancelled", describe.Cancelled(), "cancelled"},
		{"accepted", describe.AskAccepted("s1"), "accepted in session s1; follow it with 'lumen tail' or 'lumen sessions s1'"},
		{"heard", describe.Heard(`turn it "red"`), `heard: "turn it \"red\""`},
		{"no spoken answer", describe.NoSpokenAnswer("no voice"), "lumen: no spoken answer: no voice"},
		{"listening", describe.Listening(), "listening… (speak; a second of silence ends it)"},
		{"too long", describe.RecordingTooLong(30 * time.Second),
			"stopped at --max 30s (never a second of silence: a noisy room? raise --threshold)"},
		{"sent", describe.RecordingSent(2340 * time.Millisecond), "heard 2.3 s, sending…"},
		{"play failed", describe.PlayFailed(errors.New("no player"), "lumen-answer.wav"), "lumen: no player; the answer is in lumen-answer.wav"},
		{"answer audio", describe.AnswerAudio("a.wav", 1024), "answer audio: a.wav (1024 bytes)"},
		{"eval started", describe.EvalStarted(1, 4, "llama3.1", "red"), "lumen eval: [1/4] llama3.1 red…"},
		{"eval case", describe.EvalCase(2, 4, "ok red"), "  [2/4] ok red"},
		{"reading journal", describe.ReadingJournal("desk"), "lumen: reading light desk's journal…"},
		{"slice from the start", describe.SliceWritten(3, "desk", 1, 3, false, "d.slice"),
			"wrote 3 events of light desk (sequences 1 to 3, from the light's first event) to d.slice"},
		{"slice from a snapshot", describe.SliceWritten(2, "desk", 8, 9, true, "d.slice"),
			"wrote 2 events of light desk (sequences 8 to 9, from its state before them) to d.slice"},
		{"replay from snapshot", describe.ReplayFromSnapshot(40), "from snapshot at input 40"},
		{"replay gap", describe.ReplayGap(messages.OutGapData{From: 5, To: 9, Reason: "damaged block"}, 40),
			"lost events 5 to 9 (damaged block): on from the snapshot at input 40"},
		{"replay gap of one", describe.ReplayGap(messages.OutGapData{From: 5, To: 5, Reason: "damaged block"}, 40),
			"lost event 5 (damaged block): on from the snapshot at input 40"},
		{"replayed", describe.Replayed("desk", "12 inputs"), "desk: 12 inputs"},
		{"verified", describe.Verified(), "verify: every recorded output matches"},
		{"released", describe.Released(), "released the button"},
		{"double is two clicks", describe.DoubleIsTwoClicks(),
			"lumen: no rule reacts to button_double_click in this state: the light takes two quick presses as two clicks"},
		{"no edge", describe.NoEdge(23, "high"), "BCM 23 was already high: no edge"},
		{"preview written", describe.PreviewWritten("warm", 10, 8, "p.png"), "warm: 10 frames × 8 pixels written to p.png"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", tt.got, tt.want)
			}
		})
	}
}

var columns = regexp.MustCompile(` {2,}`)

func TestPis(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.Local)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	rows := []describe.PiRow{
		{Name: "kitchen", Lights: []string{"desk", "hall"}, Seen: true, Connected: true, Since: ago(time.Minute), Lag: 3, Stalled: ago(time.Second)},
		{Name: "attic", Lights: []string{"roof"}, Seen: true, Since: ago(time.Hour), Refused: "10.0.0.9", RefusedSince: ago(2 * time.Second)},
		{Name: "garage", Lights: []string{"door"}},
	}
	tests := []struct {
		name    string
		running bool
		want    string
	}{
		{"running", true, "" +
			"PI | LIGHTS | STATUS | LAG\n" +
			"kitchen | desk,hall | connected since 11:59:00 (1m0s ago) | 3 (copy stalled since 11:59:59 (1s ago))\n" +
			"attic | roof | disconnected since 11:00:00 (1h0m0s ago); refused a second Pi from 10.0.0.9 since 11:59:58 (2s ago): each Pi needs its own creds (lumen hub pi add) | 0\n" +
			"garage | door | registered, not seen yet | -\n"},
		{"stopped", false, "" +
			"PI | LIGHTS | STATUS | LAG\n" +
			"kitchen | desk,hall | hub not running | -\n" +
			"attic | roof | hub not running | -\n" +
			"garage | door | hub not running | -\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := describe.Pis(&b, rows, tt.running, now); err != nil {
				t.Fatal(err)
			}
			// The columns, whatever their padding.
			if got := columns.ReplaceAllString(b.String(), " | "); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
