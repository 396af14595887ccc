package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

// A configuration change as a diff, as lumen diff prints it: the page's
// History shows it under each change. The changes themselves, and the
// rollback, are the light's history and rollback verbs.

// DiffReply answers GET /api/v1/lights/{light}/diff: the YAML of lumen
// export from one configuration (From) to another (To) as a unified
// diff, "" when they are the same.
type DiffReply struct {
	OK   bool   `json:"ok"`
	From string `json:"from"`
	To   string `json:"to"`
	Diff string `json:"diff"`
}

// diff answers ?seq=N, change N (from the configuration before it), or
// ?seq=N&to=M, from the configuration after input N to the one after M.
func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	light, ok := s.pathLight(w, r)
	if !ok {
		return
	}
	seq, err := querySeq(r, "seq", true)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	to, err := querySeq(r, "to", false)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// A replay reads the journal: as slow as the slow verbs.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(slowAnswerWithin + 5*time.Second))
	ctx, cancel := context.WithTimeout(r.Context(), slowAnswerWithin)
	defer cancel()
	lr := s.wire.Light(light)
	var from, last uint64
	var before, after string
	if to != 0 {
		from, last = seq, to
		if before, err = messages.ConfigYAMLAt(ctx, lr, from); err == nil {
			after, err = messages.ConfigYAMLAt(ctx, lr, last)
		}
	} else {
		last = seq
		from, before, after, err = messages.ChangeYAML(ctx, lr, seq)
	}
	switch {
	case errors.Is(err, messages.ErrNotAChange):
		writeError(w, http.StatusNotFound, fmt.Sprintf("input %d changed no configuration of light %s: its history lists the changes; ?seq=%d&to=M compares the configuration after input %d with the one after M", seq, light, seq, seq))
		return
	case err != nil:
		s.refused(w, r, light, nil, err)
		return
	}
	fromLabel, toLabel := describe.ConfigLabel(light, from), describe.ConfigLabel(light, last)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, DiffReply{OK: true, From: fromLabel, To: toLabel, Diff: describe.Diff(fromLabel, toLabel, before, after)})
}

// querySeq is the input sequence of query parameter name: a positive
// number, or 0 when it is absent and not required.
func querySeq(r *http.Request, name string, required bool) (uint64, error) {
	v := r.URL.Query().Get(name)
	if v == "" && !required {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		if v == "" {
			return 0, fmt.Errorf("give ?%s=N, the sequence of a configuration change (the light's history lists them)", name)
		}
		return 0, fmt.Errorf("%s %q is not a sequence: give a positive number (the light's history lists them)", name, v)
	}
	return n, nil
}
