package messages

import (
	"fmt"
	"time"
)

// Temporary layers: rules added for a while ("the next 3 clicks red, then
// back to normal"), which the light removes by itself when the layer's
// lifetime ends, returning to the state it had when the layer began.

// Verbs of layers and of switching rules.
const (
	VerbDeleteLayer  = "delete_layer"  // NameRequest: end a layer early
	VerbDisableRules = "disable_rules" // IDsRequest
)

// Configuration ops of layers (InConfigData.Op); append_rules with a
// layer adds one.
const (
	OpDeleteLayer = "delete_layer" // end layer Name
)

// Input and output types of layers.
const (
	InLayer  = "layer" // InLayerData: a layer's deadline came
	OutLayer = "layer" // OutLayerData: a layer ended
)

// How a layer ended, the "ended_by" of OutLayerData: its lifetime (fires,
// ms, until) or delete_layer.
const (
	LayerEndFires  = "fires"
	LayerEndMs     = "ms"
	LayerEndUntil  = "until"
	LayerEndDelete = "delete"
)

// MaxLayers bounds the layers a light has at once: each input tries
// their rules first.
const MaxLayers = 32

// LayerSpec is the "layer" of append_rules: the rules are added as one
// temporary layer.
//
//		{"name":"next3","fires":3}
//		{"ms":600000,"restore":false}
//		{"until":"getData('guests') === 0"}
//
//	  - name     optional; default layer<N>, the first N not in use.
//	  - fires    the layer's rules fire this many times; the next input
//	    one of them would have matched (from and on: conditions are not
//	    evaluated) ends the layer.
//	  - ms       the layer ends this many milliseconds after it began, a
//	    durable deadline (late after a restart, like a timer).
//	  - until    a JavaScript condition: the layer ends after the first
//	    input after which it holds.
//	  - restore  default true: when the layer ends, the light returns to
//	    the state it had when the layer began; then the input that ended
//	    it by fires does nothing else. With false the light stays where
//	    it is, and that input goes on to the remaining rules.
//
// Exactly one of fires, ms and until.
type LayerSpec struct {
	Name    string `json:"name,omitempty"`
	Fires   *int   `json:"fires,omitempty"`
	Ms      *int64 `json:"ms,omitempty"`
	Until   string `json:"until,omitempty"`
	Restore *bool  `json:"restore,omitempty"`
}

// MaxLayerMs bounds a layer's ms, as startTimer's delay is bounded: about
// 31 years.
const MaxLayerMs = 1e12

// Check says what is wrong with the spec as given, without the light:
// not exactly one lifetime, a count or a duration out of range, a bad
// name.
func (s *LayerSpec) Check() error {
	n := 0
	if s.Fires != nil {
		n++
	}
	if s.Ms != nil {
		n++
	}
	if s.Until != "" {
		n++
	}
	switch {
	case n != 1:
		return fmt.Errorf(`layer: give exactly one of fires (how many times its rules fire), ms (how long it lasts) or until (a condition that ends it), e.g. "layer":{"fires":3}`)
	case s.Fires != nil && *s.Fires < 1:
		return fmt.Errorf("layer: fires is %d; give how many times the layer's rules fire before it ends, at least 1", *s.Fires)
	case s.Ms != nil && (*s.Ms < 1 || *s.Ms > MaxLayerMs):
		return fmt.Errorf("layer: ms is %d; give how long the layer lasts in milliseconds, from 1 to %.0f", *s.Ms, float64(MaxLayerMs))
	}
	if s.Name != "" {
		if err := CheckName("layer", s.Name); err != nil {
			return fmt.Errorf("layer: %w", err)
		}
	}
	return nil
}

// Layer is a live layer of a light, as get, export, apply and snapshots
// show it.
//
//		{"name":"next3","rules":[{"id":"r3","from":"*","on":"button_click","to":"red",…}],
//		 "fires_left":2,"restore":true,"began_state":"off"}
//
//	  - name         the layer's name, unique among the light's layers.
//	  - rules        its rules, tried before the light's own rules (and
//	    before those of older layers) while it lives. Their ids are the
//	    light's: r<N>, never reused.
//	  - fires_left   how many more times its rules fire (0: the next input
//	    one of them would match ends it), or
//	  - deadline     when it ends (RFC 3339), or
//	  - until        the condition after which it ends.
//	  - restore      whether its end returns the light to began_state
//	    (default true in apply).
//	  - began_state  the state the light was in when it began.
type Layer struct {
	Name       string     `json:"name"`
	Rules      []Rule     `json:"rules"`
	FiresLeft  *int       `json:"fires_left,omitempty"`
	Deadline   *time.Time `json:"deadline,omitempty"`
	Until      string     `json:"until,omitempty"`
	Restore    bool       `json:"restore"`
	BeganState string     `json:"began_state"`
}

// UnmarshalJSON reads a layer strictly, restore defaulting to true.
func (l *Layer) UnmarshalJSON(b []byte) error {
	type plain Layer
	p := plain{Restore: true}
	if err := Decode(b, &p); err != nil {
		return err
	}
	*l = Layer(p)
	return nil
}

// InLayerData says layer Name, due to end at Deadline, is due. late is
// true when the daemon was down at the deadline and ends it afterwards.
type InLayerData struct {
	Name     string    `json:"name"`
	Deadline time.Time `json:"deadline"`
	Late     bool      `json:"late,omitempty"`
}

// OutLayerData reports that a layer ended: how (LayerEnd*), and whether
// the light returned to the state it had when the layer began (a state
// output follows then). late: its deadline passed while the daemon was
// down.
type OutLayerData struct {
	Name     string `json:"name"`
	EndedBy  string `json:"ended_by"`
	Restored bool   `json:"restored"`
	Late     bool   `json:"late,omitempty"`
}

// IDsRequest is the body of disable_rules, and of enable_rules without
// "enabled": {"ids":["r3","r4"]}.
type IDsRequest struct {
	IDs []string `json:"ids"`
}
