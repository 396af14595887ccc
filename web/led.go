package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// What the LED shows, as Server-Sent Events: `event: led` with data
// {"light","state","cause","time","pixels","raw"}, first what it shows
// now, then each new state and each frame of an animation, at most 30
// a second. The page's swatch is the real LED.

// LEDEvent is one event of an LED stream.
type LEDEvent struct {
	Light string `json:"light"`
	messages.LEDEvent
}

// ledEvery spaces an animation's frames on a stream: 30 a second.
const ledEvery = time.Second / 30

func (s *Server) lightLED(w http.ResponseWriter, r *http.Request) {
	light, ok := s.pathLight(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	led, err := s.wire.Light(light).LED(ctx)
	cancel()
	if errors.Is(err, wire.ErrNoLight) {
		s.noLight(w, r, light)
		return
	}
	var now []LEDEvent
	if err == nil {
		now = append(now, ledNow(light, led))
	}
	s.ledStream(w, r, []string{subject.LED(light), subject.LEDFrames(light)}, now)
}

func (s *Server) allLED(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	var now []LEDEvent
	if names, err := s.lightNames(ctx); err == nil {
		for _, rep := range s.wire.RequestAll(ctx, names, messages.VerbLED, nil) {
			if led, err := wire.As[messages.LEDReply](rep); err == nil {
				now = append(now, ledNow(rep.Light, led))
			}
		}
	}
	cancel()
	s.ledStream(w, r, []string{subject.LED("*"), subject.LEDFrames("*")}, now)
}

// ledNow is the led verb's reply as an event.
func ledNow(light string, rep messages.LEDReply) LEDEvent {
	return LEDEvent{Light: light, LEDEvent: messages.LEDEvent{State: rep.State, Time: time.Now().UTC(), Pixels: rep.Pixels, Raw: rep.Raw, Brightness: rep.Brightness}}
}

// ledStream sends now, then what the LEDs of subjects announce.
func (s *Server) ledStream(w http.ResponseWriter, r *http.Request, subjects []string, now []LEDEvent) {
	ctx, cancel := s.streamCtx(r)
	defer cancel()
	// Subscribe before anything is sent, so that nothing between the
	// led replies and the first announcement is missed.
	events := make(chan *nats.Msg, 256)
	for _, subj := range subjects {
		sub, err := s.cfg.NC.Subscribe(subj, func(m *nats.Msg) {
			select {
			case events <- m:
			default: // a client that cannot keep up misses frames
			}
		})
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	rc, ok := startSSE(w)
	if !ok {
		return
	}
	for _, e := range now {
		if !sendLED(w, rc, e) {
			return
		}
	}
	last := map[string]time.Time{}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case m := <-events:
			light, _, _ := strings.Cut(strings.TrimPrefix(m.Subject, "lumen."), ".")
			frame := strings.HasSuffix(m.Subject, ".frame")
			if frame && time.Since(last[light]) < ledEvery {
				continue
			}
			var e LEDEvent
			if json.Unmarshal(m.Data, &e.LEDEvent) != nil {
				continue
			}
			e.Light = light
			last[light] = time.Now()
			if !sendLED(w, rc, e) {
				return
			}
		case <-tick.C:
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil || rc.Flush() != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

func sendLED(w http.ResponseWriter, rc *http.ResponseController, e LEDEvent) bool {
	b, err := json.Marshal(e)
	if err != nil {
		return true
	}
	if _, err := fmt.Fprintf(w, "event: led\ndata: %s\n\n", b); err != nil {
		return false
	}
	return rc.Flush() == nil
}
