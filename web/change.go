package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
)

// EditRuleRequest is the body of PUT /api/v1/lights/{light}/rules/{id}:
// the rule as it is to be, and (was) as the person saw it, so that an
// edit of a rule someone else changed in the meantime is refused (409)
// rather than made over their change.
type EditRuleRequest struct {
	Rule messages.Rule  `json:"rule"`
	Was  *messages.Rule `json:"was,omitempty"`
}

// editRule replaces one of the light's rules in one input: no verb
// replaces a rule, and delete_rules then append_rules is two inputs (a
// refusal of the second, or a crash between them, would leave the light
// without the rule). It reads get and applies the configuration with
// the rule replaced, keeping its id and its place among the rules; the
// variables are left out of the apply, so they are kept as they are.
// The light checks the rule as apply checks any, and a refusal changes
// nothing. The apply names the input the read saw (if_seq): a change made
// by someone else between the read and the apply is never undone (409);
// was guards against the longer window of the person's form.
func (s *Server) editRule(w http.ResponseWriter, r *http.Request) {
	light, ok := s.pathLight(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	raw, ok := readBody(w, r, maxBody)
	if !ok {
		return
	}
	var q EditRuleRequest
	if err := messages.Decode(raw, &q); err != nil {
		writeError(w, http.StatusBadRequest, "the body: "+err.Error()+`; send {"rule":{"from":…,"on":…,"to":…},"was":{…}}`)
		return
	}
	g, err := s.wire.Light(light).Get(r.Context())
	if err != nil {
		s.refused(w, r, light, nil, err)
		return
	}
	cfg := g.Config()
	i := -1
	for j, rule := range cfg.Rules {
		if rule.ID == id {
			i = j
		}
	}
	switch {
	case i < 0:
		writeError(w, http.StatusNotFound, fmt.Sprintf("light %s has no rule %s (of its own: a layer's rules end with it); read the rules again", light, id))
		return
	case q.Was != nil && !reflect.DeepEqual(*q.Was, cfg.Rules[i]):
		writeError(w, http.StatusConflict, fmt.Sprintf("rule %s changed since you read it; nothing was changed: read it again and edit it again", id))
		return
	}
	q.Rule.ID = id
	cfg.Rules[i] = q.Rule
	cfg.Vars = nil    // kept
	cfg.IfSeq = g.Seq // nothing changed since the read, or nothing is applied
	body, err := json.Marshal(cfg)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	m := &nats.Msg{Data: body, Header: nats.Header{}}
	if v := messages.CleanWho(r.Header.Get(messages.HeaderWho)); v != "" {
		m.Header.Set(messages.HeaderWho, v)
	}
	reply, err := s.wire.RequestMsg(r.Context(), light, messages.VerbApply, m)
	if err != nil {
		s.refused(w, r, light, nil, err)
		return
	}
	writeRaw(w, http.StatusOK, reply)
}
