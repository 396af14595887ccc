package service

import (
	"encoding/json"
	"time"
)

// The looks into the past that the service answers from the journal
// (past.go), never the light's actor.

// HistoryReq asks for every change of the configuration; Rollback makes
// the configuration what it was right after input Seq. It
// answers both from the journal (a rollback then applies like apply).
type (
	HistoryReq struct{}
	Rollback   struct{ Seq uint64 }
)

// WhyReq asks why the light is in its state (Seq 0) or did what it did
// at event Seq: it replays the journal to explain it.
type WhyReq struct{ Seq uint64 }

// WhatIfReq asks what the proposed configuration Config (an apply's
// InConfigData) would have done with the inputs from FromSeq on, or of
// the last Since.
type WhatIfReq struct {
	Config  json.RawMessage
	FromSeq uint64
	Since   time.Duration
}

// GetAt asks for the light as it was right after input Seq, or at At:
// it replays it from the journal, without the actor.
type GetAt struct {
	Seq uint64
	At  *time.Time
}
