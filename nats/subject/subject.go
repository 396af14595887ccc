// Package subject names every NATS subject, stream and bucket Lumen uses.
//
// It is the only place where subject strings are built (DESIGN.md,
// "Subjects and wire contract"); everything else calls these functions so
// the wire contract that the nats CLI and the tests rely on cannot drift.
// The package is pure: it imports nothing from NATS.
package subject

import (
	"errors"
	"fmt"
	"strings"
)

// Names of the JetStream assets and the micro service.
const (
	// Stream is the JetStream stream that journals every light's inputs
	// and outputs.
	Stream = "LUMEN"
	// SnapshotBucket is the key-value bucket holding one snapshot per
	// light, keyed by light name.
	SnapshotBucket = "LUMEN_SNAP"
	// Service is the name of the NATS micro service every light registers.
	Service = "lumen"
	// MetaLight, MetaPage and MetaHA are keys of the service's
	// discovery metadata: the light's name; the address of its daemon's
	// page when it serves one (http://HOST:PORT/ as bound: HOST may be
	// 0.0.0.0, which a hub replaces with the address it sees the Pi at);
	// and, when its daemon publishes it to Home Assistant itself (lumen
	// up --ha-mqtt), that MQTT broker's HOST:PORT, so that a hub's
	// bridge leaves the light to it.
	MetaLight = "light"
	MetaPage  = "page"
	MetaHA    = "ha"
	// AllEvents matches every event of every light: the subjects of Stream.
	AllEvents = tokRoot + ".*." + tokEvt + ".>"
)

// Directions of an event, as returned by Parse.
const (
	// DirIn marks an input: something the light applies.
	DirIn = "in"
	// DirOut marks an output: something the light decided.
	DirOut = "out"
)

// Subject tokens.
const (
	tokRoot  = "lumen"
	tokCmd   = "cmd"
	tokEvt   = "evt"
	tokFleet = "fleet"
	tokGroup = "group"
	tokSys   = "sys"
)

// ErrInvalidName is matched (errors.Is) by the errors of ValidLight,
// ValidGroup and LightName.
var ErrInvalidName = errors.New("invalid name")

// nameError is a refused name: its sentence is for people, without a
// package prefix, and it is an ErrInvalidName.
type nameError struct{ msg string }

func (e *nameError) Error() string        { return e.msg }
func (e *nameError) Is(target error) bool { return target == ErrInvalidName }

func invalidf(format string, args ...any) error {
	return &nameError{msg: fmt.Sprintf(format, args...)}
}

// ValidLight reports whether name can be used as a light name: one or more
// of a-z, 0-9, '_' and '-', and not one of the reserved names fleet, group
// and sys (they would collide with the fan-out subjects).
func ValidLight(name string) error {
	if err := validToken("light", name); err != nil {
		return err
	}
	switch name {
	case tokFleet, tokGroup, tokSys:
		return invalidf("light name %q is reserved (so are fleet, group and sys): choose another name", name)
	}
	return nil
}

// LightName is the light a person means by typed: its name in lowercase
// (Kitchen is kitchen), or an error that names the name to use when typed
// holds spaces or other characters a name cannot ("living room": use
// living_room). The wire's names stay [a-z0-9_-]+.
func LightName(typed string) (string, error) {
	name := strings.ToLower(strings.TrimSpace(typed))
	err := ValidLight(name)
	if err == nil || name == "" {
		return name, err
	}
	if alt := suggest(name); alt != name && ValidLight(alt) == nil {
		return "", invalidf("light name %q is not allowed: names are lowercase letters a-z, digits 0-9, '_' and '-': use %s", typed, alt)
	}
	return "", err
}

// suggest replaces each run of spaces and punctuation with '_'; a name
// with other letters (küche) has no suggestion: "" is returned.
func suggest(name string) string {
	var b strings.Builder
	gap := false
	for _, c := range name {
		if c >= 0x80 {
			return ""
		}
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(c)
			gap = false
			continue
		}
		gap = true
	}
	return b.String()
}

// ValidGroup reports whether name can be used as a group name: one or more
// of a-z, 0-9, '_' and '-'.
func ValidGroup(name string) error {
	return validToken("group", name)
}

// validToken checks name against [a-z0-9_-]+ without a regexp, since it
// runs on every command.
func validToken(kind, name string) error {
	if name == "" {
		return invalidf("%s name is empty: use one or more lowercase letters a-z, digits 0-9, '_' or '-'", kind)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' {
			continue
		}
		return invalidf("%s name %q is not allowed: use only lowercase letters a-z, digits 0-9, '_' or '-'", kind, name)
	}
	return nil
}

// Cmd is the request subject of a light's command verb:
// lumen.<light>.cmd.<verb>.
func Cmd(light, verb string) string {
	return CmdPrefix(light) + "." + verb
}

// CmdPrefix is the subject prefix of a light's commands, lumen.<light>.cmd,
// for use as a micro service group whose endpoints are the verbs.
func CmdPrefix(light string) string {
	return tokRoot + "." + light + "." + tokCmd
}

// In is the subject of a light's input event of type typ:
// lumen.<light>.evt.in.<typ>.
func In(light, typ string) string {
	return tokRoot + "." + light + "." + tokEvt + "." + DirIn + "." + typ
}

// Out is the subject of a light's output event of type typ:
// lumen.<light>.evt.out.<typ>.
func Out(light, typ string) string {
	return tokRoot + "." + light + "." + tokEvt + "." + DirOut + "." + typ
}

// AllIn matches every input of a light: lumen.<light>.evt.in.>.
func AllIn(light string) string {
	return In(light, ">")
}

// AllOut matches every output of a light: lumen.<light>.evt.out.>.
func AllOut(light string) string {
	return Out(light, ">")
}

// LED is where the hardware actor announces, on core NATS and outside the
// journal, each time the LED starts showing a state: lumen.<light>.led.
func LED(light string) string {
	return tokRoot + "." + light + ".led"
}

// LEDFrames is where the hardware actor publishes, at most 30 times a
// second, the frames of an animated state: lumen.<light>.led.frame.
func LEDFrames(light string) string {
	return LED(light) + ".frame"
}

// Consumer is the durable consumer of Stream a light applies its inputs
// from: light-<light>.
func Consumer(light string) string { return "light-" + light }

// Events matches every event of a light, inputs and outputs:
// lumen.<light>.evt.>.
func Events(light string) string {
	return tokRoot + "." + light + "." + tokEvt + ".>"
}

// FleetCmd is the fan-out subject of a verb sent to every light:
// lumen.fleet.cmd.<verb>.
func FleetCmd(verb string) string {
	return FleetCmdPrefix() + "." + verb
}

// FleetCmdPrefix is the subject prefix of fleet commands, lumen.fleet.cmd,
// for use as a micro service group.
func FleetCmdPrefix() string {
	return tokRoot + "." + tokFleet + "." + tokCmd
}

// GroupCmd is the fan-out subject of a verb sent to every light of a
// group: lumen.group.<group>.cmd.<verb>.
func GroupCmd(group, verb string) string {
	return GroupCmdPrefix(group) + "." + verb
}

// GroupCmdPrefix is the subject prefix of a group's commands,
// lumen.group.<group>.cmd, for use as a micro service group.
func GroupCmdPrefix(group string) string {
	return tokRoot + "." + tokGroup + "." + group + "." + tokCmd
}

// Parse splits a concrete event subject. For lumen.<light>.evt.in.<typ> it
// returns dir DirIn, for lumen.<light>.evt.out.<typ> DirOut, and for any
// other lumen.<light>.evt.<typ> an empty dir. typ keeps any further tokens
// (a.b). ok is false when subject is not an event subject of a valid light,
// has an empty token, contains a wildcard, or names a direction without a
// type (lumen.<light>.evt.in).
func Parse(subject string) (light, dir, typ string, ok bool) {
	rest, found := strings.CutPrefix(subject, tokRoot+".")
	if !found {
		return "", "", "", false
	}
	light, rest, found = strings.Cut(rest, ".")
	if !found || ValidLight(light) != nil {
		return "", "", "", false
	}
	rest, found = strings.CutPrefix(rest, tokEvt+".")
	if !found {
		return "", "", "", false
	}
	for _, tok := range strings.Split(rest, ".") {
		if tok == "" || tok == "*" || tok == ">" {
			return "", "", "", false
		}
	}
	first, after, more := strings.Cut(rest, ".")
	if first == DirIn || first == DirOut {
		if !more {
			return "", "", "", false // a direction without a type
		}
		return light, first, after, true
	}
	return light, "", rest, true
}

// FanOut reports whether a command subject was sent to many lights (the
// fleet's or a group's) rather than to one.
func FanOut(subject string) bool {
	return strings.HasPrefix(subject, FleetCmdPrefix()+".") || strings.HasPrefix(subject, tokRoot+"."+tokGroup+".")
}

// Addressed is a fleet or group command as it reaches one light in a
// house: prefix (FleetCmdPrefix or GroupCmdPrefix) and verb, then the
// light's name: lumen.fleet.cmd.<verb>.<light>. The hub's account sends
// each Pi's account only its own lights' (nats/house).
func Addressed(prefix, verb, light string) string { return prefix + "." + verb + "." + light }

// Subjects of the daemon's account that outside clients reach only
// through imports (DESIGN.md, "Trust: accounts, not deny-lists").
const (
	// ingressPrefix is where a client's publish to a light's inputs
	// arrives in the daemon's account: the clients' account maps
	// lumen.<light>.evt.in.<type> to lumen.sys.in.<light>.<type>, and the
	// daemon journals it with an id and a time of its own.
	ingressPrefix = tokRoot + "." + tokSys + ".in"
	// clientsPrefix and mqttPrefix are where the daemon's account sees
	// what NATS clients and MQTT clients publish outside Lumen's own
	// subjects (home.doorbell arrives as lumen.sys.client.home.doorbell).
	clientsPrefix = tokRoot + "." + tokSys + ".client"
	mqttPrefix    = tokRoot + "." + tokSys + ".mqtt"
)

// AllIngress matches every input a client published, as the daemon's
// account receives it: lumen.sys.in.>.
func AllIngress() string { return ingressPrefix + ".>" }

// IngressMapping is the mapping of the clients' account that sends a
// client's publish to a light's inputs to the daemon's ingress, as
// nats-server's subject mappings write it.
func IngressMapping() (from, to string) {
	return In("*", ">"), ingressPrefix + ".{{wildcard(1)}}.>"
}

// ParseIngress returns the light and input type of an ingress subject
// (lumen.sys.in.<light>.<type>); ok is false for anything else.
func ParseIngress(subj string) (light, typ string, ok bool) {
	rest, found := strings.CutPrefix(subj, ingressPrefix+".")
	if !found {
		return "", "", false
	}
	light, typ, found = strings.Cut(rest, ".")
	if !found || typ == "" || ValidLight(light) != nil {
		return "", "", false
	}
	return light, typ, true
}

// ClientsPrefix is the prefix under which the daemon's account imports
// what NATS clients publish; MQTTPrefix, what MQTT clients publish.
func ClientsPrefix() string { return clientsPrefix }

// MQTTPrefix: see ClientsPrefix.
func MQTTPrefix() string { return mqttPrefix }

// Outside returns the subjects on which the daemon's account sees a
// publish to subj: by the daemon itself, by a NATS client, by an MQTT
// client. A push source listens on all three.
func Outside(subj string) []string {
	return []string{subj, clientsPrefix + "." + subj, mqttPrefix + "." + subj}
}

// History is the daemon's service that reads a stream's events for a
// client in packed batches (nats/journal): lumen.sys.history.<stream>.
func History(stream string) string { return tokRoot + "." + tokSys + ".history." + stream }

// AllHistory matches History of every stream.
func AllHistory() string { return History(">") }

// The house's subjects (nats/house). A Pi asks the hub for an everyday
// verb of any light of the house on HouseCmd: the hub sends it on to the
// light's Pi, and the light journals it by pi:<name>.
const housePrefix = tokRoot + "." + tokSys + ".house"

// HouseCmd is where a Pi asks the house for verb of light:
// lumen.sys.house.<light>.cmd.<verb>.
func HouseCmd(light, verb string) string {
	return housePrefix + "." + light + "." + tokCmd + "." + verb
}

// HouseLights is where a Pi asks the house for its directory: every
// light, its Pi, room, aliases, groups and states (messages.HouseLightsReply):
// lumen.sys.house.lights. It has four tokens where HouseCmd has six, so a
// light named lights does not collide with it.
func HouseLights() string { return housePrefix + ".lights" }

// AllHouse matches HouseCmd of every light and verb, and HouseLights.
func AllHouse() string { return housePrefix + ".>" }

// PiPrefix is where the hub's account reaches one Pi's account (the
// hub's own subjects, never a client's): lumen.sys.pi.<pi>.
func PiPrefix(pi string) string { return tokRoot + "." + tokSys + ".pi." + pi }

// PiHouse is where the hub's account receives what Pi pi asks the house
// (its HouseCmd): lumen.sys.pi.<pi>.house.
func PiHouse(pi string) string { return PiPrefix(pi) + ".house" }

// ParsePiHouseLights reads what Pi pi's HouseLights is at the hub's
// account (lumen.sys.pi.<pi>.house.lights): the Pi; ok is false for
// anything else.
func ParsePiHouseLights(subj string) (pi string, ok bool) {
	parts := strings.Split(subj, ".")
	if len(parts) != 6 || parts[0] != tokRoot || parts[1] != tokSys || parts[2] != "pi" || parts[4] != "house" || parts[5] != "lights" || parts[3] == "" {
		return "", false
	}
	return parts[3], true
}

// ParsePiHouse reads a PiHouse subject: the Pi, and the light and verb
// it asks for; ok is false for anything else.
func ParsePiHouse(subj string) (pi, light, verb string, ok bool) {
	parts := strings.Split(subj, ".")
	if len(parts) != 8 || parts[0] != tokRoot || parts[1] != tokSys || parts[2] != "pi" || parts[4] != "house" || parts[6] != tokCmd {
		return "", "", "", false
	}
	if ValidLight(parts[5]) != nil || parts[7] == "" {
		return "", "", "", false
	}
	return parts[3], parts[5], parts[7], true
}
