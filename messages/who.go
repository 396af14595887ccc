package messages

import "strings"

// Who made an input: the envelope's by. Doors that name a thing add it
// after a colon (source:<name>, timer:<name>, schedule:<name>,
// agent:<session>:<step>).
const (
	WhoButton   = "button"   // the light's own button
	WhoCLI      = "cli"      // the lumen CLI
	WhoHTTP     = "http"     // the HTTP API and the page
	WhoNATS     = "nats"     // a request with no Lumen-Who header (HeaderWho): nats req
	WhoFleet    = "fleet"    // a fleet or group request with no header
	WhoRollback = "rollback" // a rollback, as rollback:<who asked>
	WhoLocal    = "local"    // the daemon itself: a seed, an upgrade
	WhoUnknown  = "unknown"  // an input journaled before by existed
	WhoAgent    = "agent"
	WhoSource   = "source"
	WhoTimer    = "timer"
	WhoSchedule = "schedule"
	WhoTool     = "tool"
	WhoPowerOn  = "power_on"   // the daemon, starting after an unclean stop (the light's power_on)
	WhoConfig   = "lumen.yaml" // the daemon, starting: what lumen.yaml says of a light (its names)
	// WhoHomeAssistant is a command from Home Assistant over MQTT (ha).
	WhoHomeAssistant = "homeassistant"
)

// maxWho bounds a by: it is a label, not a message.
const maxWho = 128

// Who joins a door and what it names: Who("source", "weather") is
// source:weather.
func Who(door string, names ...string) string {
	return strings.Join(append([]string{door}, names...), ":")
}

// CleanWho returns who if it can be journaled as a by (printable ASCII
// without spaces or quotes, at most 128 bytes), else "".
func CleanWho(who string) string {
	if len(who) > maxWho {
		return ""
	}
	for i := 0; i < len(who); i++ {
		if c := who[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return ""
		}
	}
	return who
}

// WhoOf is the by an input shows: unknown when it has none.
func WhoOf(by string) string {
	if by == "" {
		return WhoUnknown
	}
	return by
}
