package netpolicy

import (
	"errors"
	"fmt"
)

// Refused reports a request that was not sent: the policy does not allow it
// (scheme, host, address, redirect) or it is malformed (URL, method,
// header). Reason is a sentence that says what is wrong and what to do.
type Refused struct {
	Reason string
}

func (e *Refused) Error() string { return "netpolicy: " + e.Reason }

func refusedf(format string, args ...any) *Refused {
	return &Refused{Reason: fmt.Sprintf(format, args...)}
}

// The limits an *Exceeded reports, for errors.Is.
var (
	ErrRateLimited = errors.New("netpolicy: rate limited")
	ErrTooLarge    = errors.New("netpolicy: response too large")
	ErrTimeout     = errors.New("netpolicy: request timed out")
)

// Exceeded reports a request that the policy allowed but that hit one of
// the Limits. Limit is ErrRateLimited, ErrTooLarge or ErrTimeout; Reason is
// a sentence that says what to do.
type Exceeded struct {
	Limit  error
	Reason string
}

func (e *Exceeded) Error() string { return "netpolicy: " + e.Reason }

// Unwrap returns Limit, so that errors.Is(err, ErrTooLarge) works.
func (e *Exceeded) Unwrap() error { return e.Limit }
