// Package ha is Lumen's door to Home Assistant over MQTT: each light
// announced by MQTT discovery (device-based, retained) as a device with a
// light entity (schema json), an event entity and device triggers for its
// button; Home Assistant's commands turned into the everyday verbs; the
// light's state published with final values only. This file and
// command.go, state.go are pure; bridge.go does the I/O.
package ha

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// DefaultPrefix is Home Assistant's discovery prefix unless it was
// changed in its MQTT settings.
const DefaultPrefix = "homeassistant"

// Topics under which Lumen publishes and listens; the root is Lumen's
// own, beside the discovery prefix.
const topicRoot = "lumen"

// Kelvin range of the light entity: set_color takes 1000 to 12000.
const (
	MinKelvin = 1000
	MaxKelvin = 12000
)

// Gestures are the button's event types, as the event entity and the
// device triggers name them.
var Gestures = []string{"click", "double_click", "hold"}

// triggerTypes are Home Assistant's device trigger types for each
// gesture (its documented button_* types).
var triggerTypes = map[string]string{"click": "button_short_press", "double_click": "button_double_press", "hold": "button_long_press"}

// Light is what discovery says of one light.
type Light struct {
	Name string
	// Room is suggested as the device's area.
	Room string
	// States are the light's states; all but off and color become the
	// light entity's effects.
	States []string
	// Page is the light's page (configuration_url); "" for none.
	Page string
	// Node names the daemon (or the hub) that publishes the light: its
	// availability topic is the node's, whose last will says offline.
	// Nodes are more whose availability it needs too (at a hub, its
	// Pi's): the light is available when all are.
	Node  string
	Nodes []string
	// Version is Lumen's, the device's sw_version.
	Version string
}

// ID is the light's device identifier and the root of its entities'
// unique ids: derived from the light's name only, so that it never
// changes for a light, across restarts, upgrades and Pis.
func ID(light string) string { return "lumen_" + light }

// Topic is the light's topic for what (set, state, event, button).
func Topic(light, what string) string { return topicRoot + "/" + light + "/" + what }

// AvailabilityTopic is the node's availability: "online", retained, and
// "offline" as its last will.
func AvailabilityTopic(node string) string { return topicRoot + "/node/" + node + "/availability" }

// DiscoveryTopic is where the light's device discovery goes, retained.
func DiscoveryTopic(prefix, light string) string {
	return prefix + "/device/" + ID(light) + "/config"
}

// Effects are the states Home Assistant may choose as effects: all but
// off (that is the light off) and color (the reserved state of
// set_color), sorted.
func Effects(states []string) []string {
	out := []string{}
	for _, s := range states {
		if s != "off" && s != "color" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Discovery is the light's device discovery message: topic and retained
// payload.
func Discovery(prefix string, l Light) (topic string, payload []byte, err error) {
	if err := ValidName(l.Name); err != nil {
		return "", nil, err
	}
	if err := ValidName(l.Node); err != nil {
		return "", nil, fmt.Errorf("ha: node: %w", err)
	}
	id := ID(l.Name)
	device := map[string]any{
		"identifiers":  []string{id},
		"name":         l.Name,
		"manufacturer": "Lumen",
		"model":        "Lumen light",
		"sw_version":   l.Version,
	}
	if l.Page != "" {
		device["configuration_url"] = l.Page
	}
	if l.Room != "" {
		device["suggested_area"] = l.Room
	}
	components := map[string]any{
		"light": map[string]any{
			"platform":              "light",
			"unique_id":             id + "_light",
			"name":                  nil, // the device's name
			"schema":                "json",
			"command_topic":         Topic(l.Name, "set"),
			"state_topic":           Topic(l.Name, "state"),
			"brightness":            true,
			"supported_color_modes": []string{"rgb", "color_temp"},
			"color_temp_kelvin":     true,
			"min_kelvin":            MinKelvin,
			"max_kelvin":            MaxKelvin,
			"effect":                true,
			"effect_list":           Effects(l.States),
			"qos":                   1,
		},
		"button": map[string]any{
			"platform":     "event",
			"unique_id":    id + "_button",
			"name":         "Button",
			"state_topic":  Topic(l.Name, "event"),
			"event_types":  Gestures,
			"device_class": "button",
		},
	}
	for _, g := range Gestures {
		components[g] = map[string]any{
			"platform":        "device_automation",
			"automation_type": "trigger",
			"type":            triggerTypes[g],
			"subtype":         "button_1",
			"topic":           Topic(l.Name, "button"),
			"payload":         g,
		}
	}
	avail := []map[string]string{{"topic": AvailabilityTopic(l.Node)}}
	for _, n := range l.Nodes {
		if err := ValidName(n); err != nil {
			return "", nil, fmt.Errorf("ha: node: %w", err)
		}
		avail = append(avail, map[string]string{"topic": AvailabilityTopic(n)})
	}
	msg := map[string]any{
		"device":       device,
		"origin":       map[string]any{"name": "lumen", "sw_version": l.Version, "support_url": "https://github.com/lumen-home/lumen"},
		"availability": avail,
		"components":   components,
	}
	if len(avail) > 1 {
		msg["availability_mode"] = "all"
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return "", nil, fmt.Errorf("ha: discovery of %s: %w", l.Name, err)
	}
	return DiscoveryTopic(prefix, l.Name), b, nil
}

// ValidName checks that a light or node name can be a topic level and
// part of an id: Lumen's light names already are (lower-case letters,
// digits, _ and -); a wildcard or a separator never is.
func ValidName(name string) error {
	if name == "" {
		return fmt.Errorf("ha: an empty name")
	}
	if strings.ContainsAny(name, "/+#\x00 ") {
		return fmt.Errorf("ha: %q cannot be an MQTT topic level", name)
	}
	return nil
}
