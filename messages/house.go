package messages

// HouseLightsReply answers lumen.sys.house.lights, a Pi's question for
// the house's directory: every light of the house, sorted by name, so
// that what is said to one light can name another ("turn off the kitchen
// light" said on one Pi reaches kitchen on another).
type HouseLightsReply struct {
	OK     bool         `json:"ok"`
	Lights []HouseLight `json:"lights"`
}

// HouseLight is one light of the house as the hub last knew it: a light
// whose Pi is away is listed with Online false and what was known of it
// before.
type HouseLight struct {
	Light string `json:"light"`
	// Pi is the Pi that runs the light.
	Pi string `json:"pi"`
	// Room and Aliases are the room the light is in and the names people
	// call it by, from its get reply; omitted when it has none or the
	// hub has not heard them yet.
	Room    string   `json:"room,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
	// Groups are the groups it answers for (lumen.group.<g>.cmd), from
	// discovery.
	Groups []string `json:"groups,omitempty"`
	// States are the names of its states; empty while the hub has not
	// heard the light.
	States []string `json:"states"`
	// Page is the address of its Pi's page (lumen up --http) as a
	// browser beside the hub reaches it; omitted when the Pi serves none
	// that can be reached from there (bound on its loopback only).
	Page string `json:"page,omitempty"`
	// HA is the MQTT broker (HOST:PORT) its Pi publishes it to Home
	// Assistant on (lumen up --ha-mqtt); omitted when the Pi does not: a
	// hub's --ha-mqtt publishes only the lights that have none.
	HA string `json:"ha,omitempty"`
	// Online is whether its Pi is connected and the light answered the
	// hub's last look.
	Online bool `json:"online"`
}
