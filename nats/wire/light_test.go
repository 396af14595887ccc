package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// The typed methods send each verb its body and decode its reply type.
func TestTypedLight(t *testing.T) {
	nc := connect(t)
	got := map[string]string{} // verb → body sent
	echo := func(reply any) func(micro.Request) any {
		return func(req micro.Request) any {
			got[req.Subject()[len("lumen.k.cmd."):]] = string(req.Data())
			return reply
		}
	}
	serve(t, nc, "k", map[string]func(micro.Request) any{
		messages.VerbGet:      echo(&messages.GetReply{OK: true, Light: "k", State: "red", Seq: 7}),
		messages.VerbFire:     echo(&messages.Reply{OK: true, Seq: 8}),
		messages.VerbSetState: echo(&messages.Reply{OK: true, Seq: 9}),
		messages.VerbApply:    echo(&messages.DryRunReply{OK: true}),
		messages.VerbHistory:  echo(&messages.HistoryReply{OK: true, Light: "k"}),
		messages.VerbWhy:      echo(&messages.WhyReply{OK: true, State: "red"}),
		messages.VerbLED:      echo(&messages.LEDReply{OK: true, State: "red"}),
		messages.VerbGPIO:     echo(&messages.ErrorReply{Code: 409, Error: "gpio: the pins are real"}),
	})
	l := wire.New(nc).Light("k")
	ctx := context.Background()
	if g, err := l.Get(ctx); err != nil || g.State != "red" || g.Seq != 7 {
		t.Errorf("Get = %+v, %v", g, err)
	}
	if r, err := l.Fire(ctx, "button_click"); err != nil || r.Seq != 8 {
		t.Errorf("Fire = %+v, %v", r, err)
	}
	if r, err := l.SetState(ctx, "blue"); err != nil || r.Seq != 9 {
		t.Errorf("SetState = %+v, %v", r, err)
	}
	if _, err := l.DryRun(ctx, []byte(`{"states":[]}`)); err != nil {
		t.Errorf("DryRun: %v", err)
	}
	if h, err := l.History(ctx); err != nil || h.Light != "k" {
		t.Errorf("History = %+v, %v", h, err)
	}
	if w, err := l.Why(ctx, 3); err != nil || w.State != "red" {
		t.Errorf("Why = %+v, %v", w, err)
	}
	if led, err := l.LED(ctx); err != nil || led.State != "red" {
		t.Errorf("LED = %+v, %v", led, err)
	}
	var we *wire.Error
	if _, err := l.GPIO(ctx, 23, 1); !errors.As(err, &we) || we.Code != 409 {
		t.Errorf("GPIO on real pins: %v, want a 409", err)
	}
	all := wire.New(nc).RequestAll(ctx, []string{"k", "gone"}, messages.VerbGet, nil)
	if g, err := wire.As[messages.GetReply](all[0]); err != nil || g.State != "red" {
		t.Errorf("As(get) = %+v, %v", g, err)
	}
	if _, err := wire.As[messages.GetReply](all[1]); !errors.Is(err, wire.ErrNoLight) {
		t.Errorf("As(a light that does not run) = %v, want ErrNoLight", err)
	}
	for verb, want := range map[string]any{
		messages.VerbFire:     messages.FireRequest{Transition: "button_click"},
		messages.VerbSetState: messages.SetStateRequest{Name: "blue"},
		messages.VerbWhy:      messages.WhyRequest{Seq: 3},
		messages.VerbGet:      messages.GetRequest{},
		messages.VerbApply:    map[string]any{"states": []any{}, "dry_run": true},
	} {
		w, _ := json.Marshal(want)
		var a, b any
		_ = json.Unmarshal(w, &a)
		_ = json.Unmarshal([]byte(got[verb]), &b)
		if aj, bj := mustJSON(a), mustJSON(b); aj != bj {
			t.Errorf("%s sent %s, want %s", verb, got[verb], w)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
