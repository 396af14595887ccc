package daemon_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// whyLight's rules compare a thermometer's reading, which a NATS source
// stores, with a limit; a click rule is disabled.
const whyLight = `{
	"states":[{"name":"off","r":0,"g":0,"b":0},{"name":"cold","r":0,"g":128,"b":255},{"name":"warm","r":255,"g":128,"b":0}],
	"rules":[
		{"from":"*","on":"temp_updated","to":"cold","condition":"getData('temp') < getData('limit')"},
		{"from":"*","on":"temp_updated","to":"warm"},
		{"from":"off","on":"button_click","to":"warm","enabled":false}],
	"sources":[{"name":"thermo","type":"nats","subject":"home.thermo","store":{"temp":"result.temp"},"fires":"temp_updated"}]}`

// why names the input, the rule, what it read and who set it; of a
// click no rule took, the disabled rule; an input that is not there is
// refused. whatif replays the recorded inputs against a proposal and
// changes nothing; a proposal that is no configuration is refused.
// (lumen why's and whatif's words, and the journal slice read where no
// daemon runs: cmd/lumen's why_e2e_test.go.)
func TestWhyAndWhatIf(t *testing.T) {
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	mustOK(t, nc, messages.VerbApply, whyLight)
	limitSeq := uint64(mustOK(t, nc, messages.VerbSetVar, `{"name":"limit","value":10}`)["seq"].(float64))
	mustOK(t, nc, messages.VerbSetState, `{"name":"off"}`)
	state := func() any { return mustOK(t, nc, messages.VerbGet, `{}`)["state"] }
	// The source starts after apply answers: publish until it stores.
	lumentest.WaitFor(t, 20*time.Second, "the thermometer's reading to reach the light", func() bool {
		if err := nc.Publish("home.thermo", []byte(`{"temp":5}`)); err != nil {
			t.Fatal(err)
		}
		// A reading a little while to arrive before the next.
		return lumentest.Within(100*time.Millisecond, func() bool { return state() == "cold" })
	})

	why := func(body string) messages.WhyReply {
		t.Helper()
		b, code := request(t, nc, messages.VerbWhy, body)
		var w messages.WhyReply
		if code != "" || json.Unmarshal(b, &w) != nil {
			t.Fatalf("why %s: %s %s", body, code, b)
		}
		return w
	}
	w := why(`{}`)
	if w.State != "cold" || w.Rule == nil || w.Rule.To != "cold" || w.Input.Type != messages.InData || w.Input.By != "source:thermo" ||
		w.Condition == nil || !w.Condition.Value {
		t.Fatalf("why: %+v", w)
	}
	reads := map[string]messages.WhyRead{}
	for _, r := range w.Reads {
		reads[r.Name] = r
	}
	if r := reads["temp"]; string(r.Value) != "5" || r.SetBy == nil || r.SetBy.Seq != w.Input.Seq || r.SetBy.By != "source:thermo" {
		t.Errorf("read temp: %+v %+v", r, r.SetBy)
	}
	if r := reads["limit"]; string(r.Value) != "10" || r.SetBy == nil || r.SetBy.Seq != limitSeq || r.SetBy.Type != messages.InVar || r.SetBy.By != messages.WhoNATS {
		t.Errorf("read limit: %+v %+v (set_var was input %d)", r, r.SetBy, limitSeq)
	}
	if len(w.Skipped) != 1 || !strings.HasPrefix(w.Skipped[0].Why, "not tried") {
		t.Errorf("skipped: %+v", w.Skipped)
	}
	if w.Previous == nil || w.Previous.Input.Type != messages.InState || w.Previous.Input.By != messages.WhoNATS {
		t.Errorf("previous: %+v", w.Previous)
	}

	// A click no rule takes: why names the disabled rule.
	mustOK(t, nc, messages.VerbSetState, `{"name":"off"}`)
	clickSeq := uint64(mustOK(t, nc, messages.VerbFire, `{"transition":"button_click"}`)["seq"].(float64))
	click := why(fmt.Sprintf(`{"seq":%d}`, clickSeq))
	if click.Rule != nil || click.Input.By != messages.WhoNATS || !strings.Contains(click.Summary, "changed nothing") ||
		len(click.Skipped) != 1 || click.Skipped[0].Why != "it is disabled" {
		t.Errorf("why %d: %+v", clickSeq, click)
	}
	if b, code := request(t, nc, messages.VerbWhy, `{"seq":999999}`); code == "" {
		t.Errorf("why of no input: %s", b)
	}

	// What if the comparison had been the other way round: the
	// thermometer's reading would have made it warm; nothing changes.
	proposed := strings.Replace(whyLight, "getData('temp') < getData('limit')", "getData('temp') > getData('limit')", 1)
	whatif := func(body string) messages.WhatIfReply {
		t.Helper()
		b, code := request(t, nc, messages.VerbWhatIf, body)
		var wi messages.WhatIfReply
		if code != "" || json.Unmarshal(b, &wi) != nil {
			t.Fatalf("whatif: %s %s", code, b)
		}
		return wi
	}
	wi := whatif(`{"config":` + proposed + `}`)
	if wi.Differ < 1 || wi.Differences[0].Seq != w.Input.Seq || wi.Differences[0].Recorded != "cold" || wi.Differences[0].Proposed != "warm" {
		t.Errorf("whatif: %+v", wi)
	}
	wi = whatif(fmt.Sprintf(`{"config":%s,"from_seq":%d}`, proposed, w.Input.Seq))
	if wi.FromSeq != w.Input.Seq || wi.Differ < 1 || wi.Differences[0].Seq != w.Input.Seq || wi.Differences[0].Proposed != "warm" {
		t.Errorf("whatif from %d: %+v", w.Input.Seq, wi)
	}
	if s := state(); s != "off" {
		t.Errorf("whatif changed the light: %v", s)
	}
	bad := `{"config":{"states":[{"name":"a","r":1,"g":1,"b":1}],"rules":[{"from":"nowhere","on":"x","to":"a"}]}}`
	if b, code := request(t, nc, messages.VerbWhatIf, bad); code == "" || !strings.Contains(string(b), "nowhere") {
		t.Errorf("whatif of a bad proposal: %s %s", code, b)
	}
}
