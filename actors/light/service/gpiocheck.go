package service

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lumen-home/lumen/actors/light"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
)

// SourceCheck decides whether a gpio source may have its pin, given the
// other sources the light will have beside it; the error is a
// *datasource.Error (typically 409) or any error (500).
type SourceCheck func(def datasource.Def, others []datasource.Def) error

// WithHA says the daemon runs the Home Assistant bridge (lumen up
// --ha-mqtt) to broker (HOST:PORT): an mqtt source may then listen on its
// broker (broker: ha), where without it such a source is refused before
// anything is journaled; and discovery tells the broker
// (subject.MetaHA), so that a hub's bridge leaves the light to it.
func WithHA(broker string) ServeOption {
	return func(h *handler) { h.ha = broker }
}

// WithSourceCheck has the service run check on every gpio source that
// create_source or apply would journal, and refuse the request with the
// error's code when check says no. The hardware actor, which owns the
// pins, answers it (device.SourceCheck): a pin of the LED or the button,
// or one another source watches with another pull, is refused before
// anything is journaled. Replay does not depend on it: it is the daemon's
// wiring, like the minimum interval.
func WithSourceCheck(check SourceCheck) ServeOption {
	return func(h *handler) { h.sourceCheck = check }
}

// vetSources runs the source check on the gpio sources of a configuration
// command; other messages pass. The others are read from the light's
// model (create_source adds to its sources) or from the command itself
// (apply replaces them).
func (h *handler) vetSources(msg any) error {
	cmd, ok := msg.(*light.Command)
	if !ok || cmd.Type != messages.InConfig {
		return nil
	}
	var data messages.InConfigData
	if json.Unmarshal(cmd.Data, &data) != nil {
		return nil // the light refuses it with its own sentence
	}
	var gpio, all []datasource.Def
	for _, raw := range data.Sources {
		var d datasource.Def
		if d.UnmarshalJSON(raw) != nil {
			continue
		}
		all = append(all, d)
		if d.Kind() == datasource.TypeGPIO {
			gpio = append(gpio, d)
		}
		if d.Kind() == datasource.TypeMQTT && d.Broker == datasource.BrokerHA && h.ha == "" {
			return &datasource.Error{Code: 409, Msg: fmt.Sprintf("source %s listens on Home Assistant's MQTT broker (broker: ha), and this lumen has none: start it with --ha-mqtt mqtt://HOST:1883 (ha_mqtt: in lumen.yaml), or leave broker out for lumen's own MQTT listener", d.Name)}
		}
	}
	if len(gpio) == 0 || h.sourceCheck == nil {
		return nil
	}
	others := all
	if data.Op != messages.OpApply {
		res, err := h.root.RequestFuture(h.pid, &light.Get{}, h.timeout).Result()
		r, ok := res.(*messages.GetReply)
		if err != nil || !ok {
			return fmt.Errorf("the light did not answer in %s (%v); try again", h.timeout, err)
		}
		others = nil
		for _, raw := range r.Sources {
			var d datasource.Def
			if d.UnmarshalJSON(raw) == nil {
				others = append(others, d)
			}
		}
		others = append(others, all...)
	}
	for _, d := range gpio {
		if err := h.sourceCheck(d, others); err != nil {
			return err
		}
	}
	return nil
}

func sourceErrorCode(err error) int {
	if se := (*datasource.Error)(nil); errors.As(err, &se) {
		return se.Code
	}
	return 500
}

func sourceSentence(err error) string {
	if se := (*datasource.Error)(nil); errors.As(err, &se) {
		return se.Msg
	}
	return err.Error()
}
