// Package datasource is the pure logic of data sources: the definition and its
// validation, reading values out of a tool's result (the body of the
// light's data input, one run of the source), the schedule (interval, jitter, restart, backoff) and the
// internal sources computed from the light's own history.
//
// Nothing here does I/O, starts a goroutine or reads the clock: time is
// always passed in, randomness comes from a seed. The actor that runs a
// source (fetch with a tool, journal the run's values as one data input;
// the light keeps _prev, sets the variables and fires the transition) is
// built on top, and replay reuses these functions
// without a network.
//
// A definition, the body of create_source (seed 000's createDataSource):
//
//		{"name":"weather","interval_ms":3600000,
//		 "fetch":{"tool":"get_weather","args":{"location":"Paris"}},
//		 "store":{"temperature":"result.main.temp"},
//		 "fires":"weather_updated"}
//
//	  - name         1–64 of a-z, 0-9, '_' and '-'.
//	  - type         poll (the default), internal, nats, webhook, mqtt or gpio.
//	    The seed's spellings are accepted: "internal": true for internal,
//	    "http_listener" for webhook, "mqtt_subscribe" for mqtt.
//	  - interval_ms  poll and internal: how often to run. Polls need it and
//	    run at most every 10 s (MinPollInterval); internal sources default to
//	    60 s and run at most every second; at most 7 days for both.
//	  - fetch        poll only: {"tool": NAME, "args": {…}}, the tool to run
//	    and its arguments (a JSON object, default {}).
//	  - store        variable → path in the result (see ParsePath). Each
//	    stored variable v also keeps v_prev, its value before the update.
//	    Required for polls; for internal sources it defaults to
//	    {tracks: "result"}.
//	  - fires        the transition fired after the variables are stored.
//	  - subject      nats: the NATS subject to listen on (wildcards allowed).
//	  - topic        mqtt: the MQTT topic, home/doorbell, which arrives on the
//	    embedded server's MQTT listener as the subject home.doorbell.
//	  - pin, pull, edge, debounce_ms  gpio: the BCM pin (0–27), the bias
//	    (none, up, down; default none, "off" is none), the edge that stores
//	    and fires (rising, falling, both; default rising) and the debounce
//	    window (0–10000 ms, default 20). The hardware actor owns the pins;
//	    the result is its edge event (gpio.go), and GPIOConflict says which
//	    pins a source may not have.
//	  - tracks       internal: state_duration (whole seconds in the current
//	    state), time_in_state_ms, transitions_today (since local midnight) or
//	    last_5_transitions (names, oldest first). The seed's
//	    {"name":"state_duration","internal":true} may omit tracks when the
//	    name is one of these.
//
// For a push source (nats, webhook, mqtt, gpio) the message payload plays
// the role of the result (PushResult: JSON as is, other text as
// {"text": …}): store reads from it and fires fires. A nats subject or
// mqtt topic may not be Lumen's or the server's, nor start with a
// wildcard, which would match them: a source must never hear the light's
// own commands.
//
// The daemon applies the operator's minimum interval (10 s unless lowered
// for tests) to internal sources too: each run journals its values.
//
// Errors are *Error values with an HTTP-like code (400 bad definition,
// 404 unknown tool, 409 a gpio pin already taken, 502 a result without the
// stored path) and a sentence
// that says what to do.
package datasource
