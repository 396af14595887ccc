// Package messages defines every command, event and reply that crosses the
// bus, and their JSON wire format.
//
// Every event on the journal is an Envelope:
//
//		{"v":1,"id":"kitchen:42:0","type":"state","light":"kitchen",
//		 "time":"2026-11-22T02:22:57.123Z","cause":42,"data":{…}}
//
//	  - v      schema version (Version).
//	  - id     unique id. Inputs: chosen by the sender (also its Nats-Msg-Id,
//	    so a retried publish is stored once). Outputs: "<light>:<cause>:<n>",
//	    n counting the outputs of one input from 0, so recomputing an output
//	    on replay yields the same id.
//	  - type   the last subject token (fired, state, var, config, timer …).
//	  - light  the light's name.
//	  - time   when the input happened (RFC 3339, UTC). An output carries its
//	    input's time, so replay reproduces it byte for byte.
//	  - cause  outputs only: the JetStream sequence of the input that caused
//	    it. The stream sequence of an event itself is read from JetStream
//	    metadata and never stored in the body.
//	  - by     inputs only, optional: who asked (Who*: button, cli, http,
//	    nats, fleet, agent:<session>:<step>, source:<name>, timer:<name>,
//	    schedule:<name>, rollback, local). Older inputs have none: unknown.
//	  - data   the typed payload of that type (see the In*/Out* types).
//
// Inputs travel on lumen.<light>.evt.in.<type>, outputs on
// lumen.<light>.evt.out.<type>. An input published without an envelope
// (a bare payload, e.g. with `nats pub`) is accepted: its type comes from
// the subject and its time from the stream.
//
// The envelope is encoded and decoded by hand (AppendEnvelope,
// DecodeEnvelope): it is on the replay hot path, where a reflective decode
// would cost more than the JetStream delivery itself.
package messages

// Version is the schema version written in every envelope's "v".
const Version = 1
