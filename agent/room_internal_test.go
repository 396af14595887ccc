package agent

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
)

// While the disk is full a new request is refused with 507 before the
// model is called or a step journaled; a request to cancel still works,
// and once there is room again requests run.
func TestAskRefusedOnAFullDisk(t *testing.T) {
	r := newMarkRig(t, agenttest.Step{Calls: done("Done.")})
	var full atomic.Bool
	full.Store(true)
	r.j = journal.New(r.js.JetStream(), journal.WithRoom(func() error {
		if full.Load() {
			return errors.New("the disk is full: free some space")
		}
		return nil
	}))
	r.cfg.Journal = r.j
	pid := r.start()
	defer r.stop(pid)

	for _, text := range []string{"make it red", ""} {
		ch := make(chan any, 1)
		r.sys.Root.Send(pid, &Ask{Req: messages.AskRequest{Text: text, Who: "test"}, Reply: func(v any) { ch <- v }})
		v := <-ch
		e, refused := v.(*messages.ErrorReply)
		switch {
		case text != "" && (!refused || e.Code != 507 || e.Error != "the disk is full: free some space"):
			t.Fatalf("ask on a full disk: %+v; want 507 with the disk's sentence", v)
		case text == "" && refused:
			t.Fatalf("a cancel on a full disk: %+v", v)
		}
	}
	if n := len(r.srv.Requests()); n != 0 {
		t.Fatalf("the model was called %d times on a full disk", n)
	}
	if seqs := r.agentSeqs(); len(seqs) != 0 {
		t.Fatalf("%d steps journaled on a full disk", len(seqs))
	}

	full.Store(false)
	if a := r.reply(r.askAsync(pid, "", "make it red")); a.Status != messages.AgentDone {
		t.Fatalf("with room again: %+v", a)
	}
}
