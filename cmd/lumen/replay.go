package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

func newReplay(a *app) *cobra.Command {
	var (
		data         string
		toSeq        uint64
		verify       bool
		fromSnapshot bool
		quiet        bool
	)
	cmd := &cobra.Command{
		Use:   "replay --light NAME",
		Short: "Rebuild a light from its journal, with no side effects, and check it",
		Long: `Replay a light's journal from the start (or its snapshot) through the state
machine: no LED, no network, no model is touched. Each applied input is printed
with the transition it caused. With --verify every recomputed output must equal
the recorded one byte for byte; the first difference is named by its stream
sequence and the command fails.

With --data DIR it reads a data directory directly (the daemon must be
stopped); otherwise it reads the journal of the running daemon at --server.`,
		Example: `  lumen replay --light demo --verify
  lumen replay --light kitchen --to-seq 1200
  lumen replay --light kitchen --data ~/.local/share/lumen --verify`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := subject.ValidLight(a.light); err != nil {
				return usageError{fmt.Errorf("--light: %w", err)}
			}
			ctx := cmd.Context()
			js, closeFn, err := a.openJournal(ctx, data)
			if err != nil {
				return err
			}
			defer closeFn()
			return replay(ctx, a, journal.New(js), toSeq, verify, fromSnapshot, quiet)
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "read this data directory directly instead of a running daemon")
	f.Uint64Var(&toSeq, "to-seq", 0, "stop after the input with this stream sequence")
	f.BoolVar(&verify, "verify", false, "fail if any recomputed output differs from the recorded one")
	f.BoolVar(&fromSnapshot, "from-snapshot", false, "start from the light's latest snapshot instead of the first event")
	f.BoolVarP(&quiet, "quiet", "q", false, "print only the summary")
	lightFlag(cmd, a)
	return cmd
}

// openJournal connects to the running daemon, or opens a stopped data dir
// with a private embedded server.
func (a *app) openJournal(ctx context.Context, data string) (jetstream.JetStream, func(), error) {
	if data == "" {
		nc, err := a.connect()
		if err != nil {
			return nil, nil, err
		}
		js, err := jetstream.New(nc)
		if err != nil {
			nc.Close()
			return nil, nil, err
		}
		return js, nc.Close, nil
	}
	if _, err := os.Stat(filepath.Join(data, "jetstream")); err != nil {
		return nil, nil, fmt.Errorf("%s holds no lumen journal (%v)", data, err)
	}
	b, err := broker.Start(ctx, broker.Config{DataDir: data, Listen: "127.0.0.1:0", Sync: "batch"})
	if err != nil {
		return nil, nil, fmt.Errorf("open %s (is the daemon still running on it?): %w", data, err)
	}
	return b.JetStream(), b.Shutdown, nil
}

func replay(ctx context.Context, a *app, j *journal.Journal, toSeq uint64, verify, fromSnapshot, quiet bool) error {
	f := &light.Fold{Light: a.light, M: machine.New(machine.WithEvalTimeout(evalReplayTimeout))}
	if fromSnapshot {
		var err error
		if f, err = light.Load(ctx, j, a.light, evalReplayTimeout); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "from snapshot at input %d\n", f.Applied)
	}
	var inputs, outputs int
	var bad error
	f.OnApplied = func(ap *light.Applied) error {
		inputs++
		outputs += len(ap.Computed)
		if !quiet {
			fmt.Fprintln(a.stdout, replayLine(ap))
		}
		if !verify {
			return nil
		}
		if seq, why := ap.Mismatch(); why != "" {
			return fmt.Errorf("output at sequence %d differs from its recomputation (input %d):\n%s", seq, ap.Input.Seq, why)
		}
		return nil
	}
	f.OnLate = func(ap *light.Applied) error {
		if !verify {
			return nil
		}
		if seq, why := ap.Mismatch(); why != "" {
			return fmt.Errorf("output at sequence %d differs from its recomputation (input %d, journaled late):\n%s", seq, ap.Input.Seq, why)
		}
		return nil
	}
	err := j.Replay(ctx, subject.Events(a.light), f.Applied+1, 0, func(m journal.Msg) error {
		if toSeq > 0 && m.Seq > toSeq {
			// Outputs of inputs up to toSeq may come after it.
			if _, dir, _, _ := subject.Parse(m.Subject); dir == "in" {
				return nil
			}
		}
		return f.Add(light.Record{Seq: m.Seq, Subject: m.Subject, Data: m.Data, Time: m.Time})
	})
	if err == nil {
		var open []*light.Applied
		open, err = f.Finish()
		if err == nil && len(open) > 0 && verify {
			ap := open[0]
			err = fmt.Errorf("input %d has only %d of its %d outputs journaled (the daemon was killed while writing them; it completes them on its next start)",
				ap.Input.Seq, len(ap.Recorded), len(ap.Computed))
		}
	}
	if err != nil {
		bad = err
	}
	fmt.Fprintf(a.stdout, "%s: %d inputs applied, %d outputs, state %s", a.light, inputs, outputs, f.M.State())
	if len(f.Pending) > 0 {
		fmt.Fprintf(a.stdout, ", %d inputs not applied yet", len(f.Pending))
	}
	fmt.Fprintln(a.stdout)
	if bad != nil {
		return bad
	}
	if verify {
		fmt.Fprintln(a.stdout, "verify: every recorded output matches")
	}
	return nil
}

// Recorded timeouts are taken as given, so replay can be generous.
const evalReplayTimeout = 10 * time.Second

func replayLine(ap *light.Applied) string {
	in := ap.Input
	what := string(in.Data)
	switch in.Type {
	case messages.InFired:
		var d messages.InFiredData
		if json.Unmarshal(in.Data, &d) == nil {
			what = d.Transition
		}
	case messages.InData:
		var d messages.InDataData
		if json.Unmarshal(in.Data, &d) == nil {
			vars, _ := json.Marshal(d.Vars)
			what = d.Source + " " + string(vars)
		}
	}
	if len(what) > 60 {
		what = clip.To(what, 57, "…")
	}
	line := fmt.Sprintf("%6d %-8s %s", in.Seq, in.Type, what)
	r := ap.Result
	switch {
	case r.Err != nil:
		line += fmt.Sprintf("  ✗ %s", r.Err.Error)
	case r.Rule != nil:
		line += fmt.Sprintf("  → %s (rule %s)", r.State, *r.Rule)
	default:
		line += fmt.Sprintf("  → %s", r.State)
	}
	return line
}
