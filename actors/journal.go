package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nuid"

	"github.com/lumen-home/lumen/internal/redact"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// The actors journal what is not an output of an input through these
// functions: a restart, an error no input caused, a button's gesture.
// The light journals inputs and their outputs itself (actors/light).

// JournalRestart records restart r of one of light's actors (an
// evt.out.restart output with cause 0: no input caused it, and replay
// does not recompute it), waiting up to 5 s for it to be stored: the
// restart is on the journal before the actor runs again.
func JournalRestart(j *journal.Journal, light string, r Restart, at time.Time) error {
	env := messages.Restart(light, messages.OutRestartData{Actor: r.Child.GetId(), Reason: fmt.Sprint(r.Reason), Restarts: r.Restarts}, nuid.Next(), at)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := j.Append(ctx, subject.Out(light, messages.OutRestart), messages.AppendEnvelope(nil, &env), journal.MsgID(env.ID))
	return err
}

// JournalFailure records an error of light that no input caused (a data
// source's failed run, a state the LED cannot show: d.Kind says which)
// without waiting; a failure to store it is logged.
func JournalFailure(j *journal.Journal, light string, d messages.OutErrorData, at time.Time, logf func(string, ...any)) {
	// A source's broker or a fetched URL may carry a password; the
	// journal is read by every client.
	d.Error = redact.URLs(d.Error)
	env := messages.Failure(light, d, nuid.Next(), at)
	Journal(j, subject.Out(light, messages.OutError), &env, logf)
}

// Journal appends env on subj without blocking the caller, and logs a
// failure. Appends from one journal are stored in the order they are
// made. Without room on the disk (journal.Room) env is dropped, with a
// log line: a gesture nobody accepted yet changes nothing, so the LED
// keeps showing the state, and an error event would only take the room
// kept for what was accepted.
func Journal(j *journal.Journal, subj string, env *messages.Envelope, logf func(string, ...any)) {
	if err := j.Room(); err != nil {
		logf("journal %s: dropped (%s): %v", subj, env.Type, err)
		return
	}
	p, err := j.AppendAsync(subj, messages.AppendEnvelope(nil, env), journal.MsgID(env.ID))
	if err != nil {
		logf("journal %s: %v", subj, err)
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := p.Wait(ctx); err != nil {
			logf("journal %s: %v", subj, err)
		}
	}()
}

// CodeFull is the wire code of a refusal for want of room: the disk, or
// the journal's budget, is full.
const CodeFull = 507

// NoRoom is the refusal of a command whose input finds no room
// (journal.Room, or an append that met ErrDiskFull or ErrFull): a 507
// that says what to do. Any other error is nil.
func NoRoom(err error) *messages.ErrorReply {
	switch {
	case errors.Is(err, journal.ErrDiskFull):
		return &messages.ErrorReply{Code: CodeFull, Error: err.Error()}
	case errors.Is(err, journal.ErrFull):
		return &messages.ErrorReply{Code: CodeFull, Error: "the journal has spent its size budget (--max-bytes) and takes nothing new until its lights purge what their snapshots cover; nothing was changed: try again later, or raise --max-bytes"}
	}
	return nil
}
