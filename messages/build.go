package messages

import (
	"encoding/json"
	"strconv"
	"time"
)

// Every event is built by one of the constructors below, which give it
// its id; the table is the whole scheme. uniq is a process-unique token
// the caller draws (a NUID): this package does no I/O and keeps no state.
//
//	| event                               | constructor | id                                 | time            | cause |
//	|-------------------------------------|-------------|------------------------------------|-----------------|-------|
//	| an input asked for (command, button)| Input       | uniq                               | when asked      | —     |
//	| the seed configuration of a light   | Input       | SeedID: <light>:seed               | start-up        | —     |
//	| a timer's or schedule's deadline    | Input       | DueID: <light>:<type>:<name>:<ns>  | when it fired   | —     |
//	| the n-th output of input seq        | Output      | OutputID: <light>:<seq>:<n>        | the input's     | seq   |
//	| a step of an agent session          | AgentStep   | AgentID: <light>:agent:<session>:<step> | when recorded | 0 |
//	| a supervised restart                | Restart     | <light>:restart:<uniq>             | when restarted  | 0     |
//	| an error no input caused            | Failure     | <light>:<kind>:<uniq> (source, render) | when it failed | 0  |
//
// An id doubles as the event's Nats-Msg-Id: an input whose id is derived
// from what it is (seed, deadline) is stored once however often it is
// sent, and so is an output recomputed after a crash.

// Input is an input of light of type typ (an In* constant) with payload
// data, made at at.
func Input(light, typ, id string, at time.Time, data json.RawMessage) Envelope {
	return Envelope{V: Version, ID: id, Type: typ, Light: light, Time: at.UTC(), Data: data}
}

// SeedID is the id of a light's seed configuration: one per light, ever.
func SeedID(light string) string { return light + ":seed" }

// UpgradeID is the id of the input that takes a light to level.
func UpgradeID(light string, level int) string { return light + ":upgrade:" + strconv.Itoa(level) }

// DueID is the id of the input a timer or schedule (typ InTimer or
// InSchedule) named name journals when its deadline comes.
func DueID(light, typ, name string, deadline time.Time) string {
	return light + ":" + typ + ":" + name + ":" + strconv.FormatInt(deadline.UnixNano(), 10)
}

// Output is the n-th output (from 0) of input cause, of type typ: it
// carries the input's time, so replay recomputes it byte for byte.
func Output(light string, cause uint64, n int, typ string, inputTime time.Time, data json.RawMessage) Envelope {
	return Envelope{V: Version, ID: OutputID(light, cause, n), Type: typ, Light: light, Time: inputTime.UTC(), Cause: cause, Data: data}
}

// OutputID is the id of the n-th output (from 0) caused by input seq.
func OutputID(light string, cause uint64, n int) string {
	b := make([]byte, 0, len(light)+24)
	b = append(b, light...)
	b = append(b, ':')
	b = strconv.AppendUint(b, cause, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(n), 10)
	return string(b)
}

// AgentStep is step d.Step of agent session d.Session, an OutAgent event
// with no cause: sessions are not replayed by the light.
func AgentStep(light string, d OutAgentData, at time.Time) (Envelope, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{V: Version, ID: AgentID(light, d.Session, d.Step), Type: OutAgent, Light: light, Time: at.UTC(), Data: data}, nil
}

// AgentID is the id of step step of an agent session.
func AgentID(light, session string, step int) string {
	return light + ":agent:" + session + ":" + strconv.Itoa(step)
}

// Restart records a supervised restart of one of light's actors.
func Restart(light string, d OutRestartData, uniq string, at time.Time) Envelope {
	data, _ := json.Marshal(d) // plain strings and ints
	return Envelope{V: Version, ID: light + ":restart:" + uniq, Type: OutRestart, Light: light, Time: at.UTC(), Data: data}
}

// Gap records events a Pi purged before the house had them.
func Gap(light string, d OutGapData, at time.Time) Envelope {
	data, _ := json.Marshal(d) // plain numbers and a string
	// From and To: each forced purge while the hub is away starts at the
	// same From, and must not be taken for a duplicate.
	return Envelope{V: Version, ID: light + ":gap:" + strconv.FormatUint(d.From, 10) + "-" + strconv.FormatUint(d.To, 10), Type: OutGap, Light: light, Time: at.UTC(), Data: data}
}

// Failure records an error of light that no input caused: a data source's
// run that failed, a state the LED cannot show. Its id names the error's
// kind (d.Kind: ErrorSource, ErrorRender).
func Failure(light string, d OutErrorData, uniq string, at time.Time) Envelope {
	data, _ := json.Marshal(d) // plain strings and ints
	return Envelope{V: Version, ID: light + ":" + d.Kind + ":" + uniq, Type: OutError, Light: light, Time: at.UTC(), Data: data}
}
