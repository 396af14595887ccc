// Package service answers a light's verbs on NATS (lumen.<light>.cmd.<verb>,
// the fleet's and groups'): each request is checked by its verb's decoder
// (translate.go) before anything is journaled, then handed to the light's
// actor, or, for a look into the past, answered from the journal
// (actors/light/past).
package service
