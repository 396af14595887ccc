package describe

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
)

// The lines the lumen command says to a person as it works: that it is
// ready, what it did, what it waits for. Each returns its line(s)
// without the final newline; the command prints them.

// DaemonReady is what lumen up says once the light answers: where, how
// to watch it, and its page, webhooks and MQTT when it serves them
// (page and mqtt are "" when not).
func DaemonReady(url, light, page, mqtt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "lumen: ready %s\n", url)
	fmt.Fprintf(&b, "lumen: watch it with: nats --server %s sub 'lumen.%s.evt.>'", url, light)
	if page != "" {
		fmt.Fprintf(&b, "\nlumen: page %s/", page)
		fmt.Fprintf(&b, "\nlumen: webhooks on %s%s", page, datasource.HookPath("LIGHT", "SOURCE"))
	}
	if mqtt != "" {
		fmt.Fprintf(&b, "\nlumen: mqtt on mqtt://%s (topic home/doorbell is subject home.doorbell)", mqtt)
	}
	return b.String()
}

// HubReady is what lumen hub says once it serves: its URL, its leaf
// listener and its page ("" when it serves none).
func HubReady(url, leaf, page string) string {
	s := fmt.Sprintf("lumen: hub ready %s leaf %s", url, leaf)
	if page != "" {
		s += fmt.Sprintf("\nlumen: page %s/", page)
	}
	return s
}

// ShuttingDown is what lumen up and lumen hub say on Ctrl-C.
func ShuttingDown() string { return "lumen: shutting down" }

// BadSourceMinInterval says that $LUMEN_SOURCE_MIN_INTERVAL_MS (v) is
// ignored.
func BadSourceMinInterval(v string) string {
	return fmt.Sprintf("lumen: LUMEN_SOURCE_MIN_INTERVAL_MS=%q is not a positive number of milliseconds; ignored", v)
}

// PiAdded says that Pi pi of lights was registered with its credentials
// in creds, and the command that starts it with them.
func PiAdded(pi string, lights []string, creds string) string {
	return fmt.Sprintf("registered Pi %s (lights %s); its credentials are in %s: copy them to the Pi and run\n  lumen up --light %s --hub tls://HUB:7422 --creds %s",
		pi, strings.Join(lights, ", "), creds, strings.Join(lights, " --light "), filepath.Base(creds))
}

// PiRemoved says that Pi pi is no longer registered.
func PiRemoved(pi string) string {
	return fmt.Sprintf("removed Pi %s: it can no longer connect; its history stays in the house stream", pi)
}

// NoPis is lumen hub pi ls of a hub without a Pi.
func NoPis() string {
	return "no Pi yet: 'lumen hub pi add NAME --light LIGHT --out FILE' registers one"
}

// PiRow is one Pi of lumen hub pi ls: what the registry and the hub's
// status say of it.
type PiRow struct {
	Name   string
	Lights []string
	// Seen is whether the running hub has a status for it; the rest
	// is that status.
	Seen, Connected bool
	Since           time.Time // connected or disconnected since
	Lag             uint64    // events of the Pi the house stream does not have
	Stalled         time.Time // since when the copy is stalled; zero if not
	Refused         string    // the address of a second machine with its creds
	RefusedSince    time.Time
}

// Pis is the table of lumen hub pi ls, as of now; running is whether
// the hub runs (a stopped hub knows nothing of its Pis' status).
func Pis(w io.Writer, rows []PiRow, running bool, now time.Time) error {
	tw := table(w)
	fmt.Fprintln(tw, "PI\tLIGHTS\tSTATUS\tLAG")
	for _, p := range rows {
		status, lag := "hub not running", "-"
		switch {
		case !running:
		case !p.Seen:
			status = "registered, not seen yet"
		case p.Connected:
			status, lag = "connected since "+Ago(p.Since, now), fmt.Sprint(p.Lag)
		default:
			status, lag = "disconnected since "+Ago(p.Since, now), fmt.Sprint(p.Lag)
		}
		if running && p.Connected && !p.Stalled.IsZero() {
			lag += " (copy stalled since " + Ago(p.Stalled, now) + ")"
		}
		if running && p.Refused != "" {
			status += fmt.Sprintf("; refused a second Pi from %s since %s: each Pi needs its own creds (lumen hub pi add)", p.Refused, Ago(p.RefusedSince, now))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, strings.Join(p.Lights, ","), status, lag)
	}
	return tw.Flush()
}

// Following is what lumen tail says on stderr as it starts following
// filter live on where.
func Following(filter, where string) string {
	return fmt.Sprintf("lumen: following %s on %s (Ctrl-C to stop)", filter, where)
}

// FollowingFrom is what lumen tail --since/--from-seq says as it starts
// reading filter from sequence from (0 is the first).
func FollowingFrom(filter string, from uint64, where string) string {
	return fmt.Sprintf("lumen: %s from sequence %d, then live, on %s (Ctrl-C to stop)", filter, max(from, 1), where)
}

// LightDid is a line of a command sent to several lights: the light,
// then what its last output says ("done" when it had none).
func LightDid(light string, outputs []messages.Envelope) string {
	line := "done"
	var d Events
	for _, o := range outputs {
		line = d.Output(o)
	}
	return fmt.Sprintf("%s\t%s", light, line)
}

// LightFailed is a line of a command sent to several lights: the light,
// then why it did not do it.
func LightFailed(light string, err error) string {
	return fmt.Sprintf("%s\terror: %v", light, err)
}

// Changed is what lumen says of what a command changed in the
// configuration.
func Changed(c messages.Changes) string { return fmt.Sprintf("changed: %s", c) }

// DryRun is what lumen apply --dry-run says: what the apply would change.
func DryRun(c messages.Changes) string { return fmt.Sprintf("dry run, nothing applied: %s", c) }

// Webhook tells of a webhook source the agent made: where to POST and
// its token, shown this once. An empty url means the daemon serves no
// HTTP.
func Webhook(source, url, token string) string {
	if url == "" {
		url = "(no HTTP: start lumen up with --http HOST:PORT) /hooks/LIGHT/" + source
	}
	return fmt.Sprintf("webhook %s: POST %s with the header Authorization: Bearer %s\n  (the token is shown this once and kept only as a hash: save it now)", source, url, token)
}

// NoSources is lumen source ls of a light without a data source.
func NoSources(light string) string { return fmt.Sprintf("light %s has no data sources", light) }

// ToolLog is a line a tool logged as it ran.
func ToolLog(line string) string { return "log: " + line }

// ToolTime is how long a tool ran.
func ToolTime(ms float64) string { return fmt.Sprintf("(%.1f ms)", ms) }

// Cancelled is what lumen ask and lumen talk say of a request stopped
// before its answer.
func Cancelled() string { return "cancelled" }

// AskAccepted is what lumen ask --async says: the session the agent
// works in, and how to follow it.
func AskAccepted(session string) string {
	return fmt.Sprintf("accepted in session %s; follow it with 'lumen tail' or 'lumen sessions %s'", session, session)
}

// Heard is what the light's agent understood of a spoken request.
func Heard(transcript string) string { return fmt.Sprintf("heard: %q", transcript) }

// NoSpokenAnswer says why the agent's answer came without speech.
func NoSpokenAnswer(why string) string { return "lumen: no spoken answer: " + why }

// Listening is what lumen talk says as the microphone opens.
func Listening() string { return "listening… (speak; a second of silence ends it)" }

// RecordingTooLong says that the recording stopped at --max, and why
// that may be.
func RecordingTooLong(limit time.Duration) string {
	return fmt.Sprintf("stopped at --max %s (never a second of silence: a noisy room? raise --threshold)", limit)
}

// RecordingSent says how long the spoken request is, as it leaves.
func RecordingSent(length time.Duration) string {
	return fmt.Sprintf("heard %.1f s, sending…", length.Seconds())
}

// PlayFailed says that the answer could not be played (err), and that it
// is in file instead.
func PlayFailed(err error, file string) string {
	return fmt.Sprintf("lumen: %v; the answer is in %s", err, file)
}

// AnswerAudio says where the spoken answer was saved, and its size.
func AnswerAudio(file string, size int) string {
	return fmt.Sprintf("answer audio: %s (%d bytes)", file, size)
}

// EvalStarted is the progress line of lumen eval --json: case name of
// model starts, the n-th of total.
func EvalStarted(n, total int, model, name string) string {
	return fmt.Sprintf("lumen eval: [%d/%d] %s %s…", n, total, model, name)
}

// EvalCase is lumen eval's line of the n-th case of total to finish,
// result being the case's own line.
func EvalCase(n, total int, result string) string {
	return fmt.Sprintf("  [%d/%d] %s", n, total, result)
}

// ReadingJournal is what lumen export says as it reads light's journal.
func ReadingJournal(light string) string {
	return fmt.Sprintf("lumen: reading light %s's journal…", light)
}

// SliceWritten says what lumen export wrote to out: n events of light,
// sequences first to last, from the light's state before them when
// snapshot, else from its first event.
func SliceWritten(n int, light string, first, last uint64, snapshot bool, out string) string {
	start := "the light's first event"
	if snapshot {
		start = "its state before them"
	}
	return fmt.Sprintf("wrote %d events of light %s (sequences %d to %d, from %s) to %s", n, light, first, last, start, out)
}

// ReplayFromSnapshot says that a replay starts from the snapshot taken
// at input in.
func ReplayFromSnapshot(in uint64) string { return fmt.Sprintf("from snapshot at input %d", in) }

// ReplayGap says that a replay met events the journal lost (g), and goes
// on from the snapshot at input in.
func ReplayGap(g messages.OutGapData, in uint64) string {
	lost := fmt.Sprintf("events %d to %d", g.From, g.To)
	if g.From == g.To {
		lost = fmt.Sprintf("event %d", g.From)
	}
	return fmt.Sprintf("lost %s (%s): on from the snapshot at input %d", lost, g.Reason, in)
}

// Replayed is a replay's last line: light, then its summary.
func Replayed(light, summary string) string { return light + ": " + summary }

// Verified is what lumen replay --verify says when every output matches.
func Verified() string { return "verify: every recorded output matches" }

// Released is what lumen press release says once the button is up.
func Released() string { return "released the button" }

// DoubleIsTwoClicks is what lumen press double says of a light where no
// rule reacts to a double click.
func DoubleIsTwoClicks() string {
	return "lumen: no rule reacts to button_double_click in this state: the light takes two quick presses as two clicks"
}

// NoEdge is what lumen gpio says of a pin already at level.
func NoEdge(pin int, level string) string {
	return fmt.Sprintf("BCM %d was already %s: no edge", pin, level)
}

// PreviewWritten says what lumen preview --png wrote to file.
func PreviewWritten(state string, frames, pixels int, file string) string {
	return fmt.Sprintf("%s: %d frames × %d pixels written to %s", state, frames, pixels, file)
}

// LightNames is lumen names of light: its room and its aliases, or how
// to give them.
func LightNames(light, room string, aliases []string) string {
	if room == "" && len(aliases) == 0 {
		return fmt.Sprintf("light %s has no room and no aliases: people can call it %s only; give it names with\n  lumen names --light %s --room bedroom --alias \"bedroom lamp\" --alias bedside",
			light, strings.ReplaceAll(light, "_", " "), light)
	}
	r, a := "(none)", "(none)"
	if room != "" {
		r = room
	}
	if len(aliases) > 0 {
		a = strings.Join(aliases, ", ")
	}
	return fmt.Sprintf("room: %s\naliases: %s", r, a)
}

// NamesChanged is what lumen names did (c, the light's changes) and,
// when q gives a name, one people can now say.
func NamesChanged(c messages.Changes, q messages.NamesRequest) string {
	s := "names: unchanged"
	if sum := c.Summary(); sum != "" {
		s = "names: " + sum
	}
	in, err := q.Input()
	if err != nil {
		return s
	}
	room, aliases, err := messages.NormalLightNames(in.Room, in.Aliases)
	switch {
	case err != nil:
	case len(aliases) > 0:
		s += fmt.Sprintf("\nnow say e.g. \"turn off the %s\" (lumen ask, the page)", aliases[len(aliases)-1])
	case room != "":
		s += fmt.Sprintf("\nnow say e.g. \"turn off the %s\": the lights of room %s", room, room)
	}
	return s
}
