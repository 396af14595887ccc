package actors_test

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors"
)

// A read asked for while one runs is made once that one is in, and only
// once however often it was asked.
func TestReader(t *testing.T) {
	var r actors.Reader
	started := make(chan struct{}, 4)
	read := func() { started <- struct{}{} }
	r.Read(read)
	<-started
	r.Read(read)
	r.Read(read)
	if !r.Reading() || len(started) != 0 {
		t.Fatal("a second read began while the first ran")
	}
	if !r.Done(true) {
		t.Fatal("the read asked for meanwhile is not made")
	}
	r.Read(read)
	<-started
	if r.Done(true) || r.Reading() {
		t.Fatal("read again with nothing asked")
	}
}

// counter is a count of changes, as wire.Changes keeps it.
type counter struct{ n uint64 }

func (c *counter) Gen() uint64 { return c.n }

// With Changes, the copy is stale once a change comes that no read made
// after it has brought, and a failed read brings nothing.
func TestReaderStale(t *testing.T) {
	changes := &counter{}
	r := actors.Reader{Changes: changes}
	done := make(chan struct{}, 4)
	read := func() { done <- struct{}{} }
	if r.Stale() {
		t.Fatal("stale before any change")
	}
	changes.n = 1
	if !r.Stale() {
		t.Fatal("not stale after a change")
	}
	r.Read(read)
	<-done
	changes.n = 2 // during the read: it may not have it
	r.Done(true)
	if !r.Stale() {
		t.Fatal("a read begun before a change covers it")
	}
	r.Read(read)
	<-done
	r.Done(false)
	if !r.Stale() {
		t.Fatal("a failed read covers the change")
	}
	r.Read(read)
	<-done
	r.Done(true)
	if r.Stale() {
		t.Fatal("stale after a read begun after the last change")
	}
}

// Waiting holds a request while the copy is stale and the ones behind
// it, and releases them in the order they came.
func TestWaiting(t *testing.T) {
	c := &counter{}
	r := actors.Reader{Changes: c}
	var w actors.Waiting[int]
	loads := 0
	load := func() { loads++ }
	if w.Hold(&r, 1, nil, load) {
		t.Fatal("held with a fresh copy and nothing waiting")
	}
	c.n++ // the light answered a change
	if !w.Hold(&r, 2, nil, load) || loads != 1 {
		t.Fatalf("stale copy: not held, or %d loads", loads)
	}
	r.Read(func() {})
	r.Done(true)
	if !w.Hold(&r, 3, nil, load) || loads != 1 {
		t.Fatalf("behind a waiting request: not held, or %d loads", loads)
	}
	var got []int
	w.Release(func(req int, _ *actor.PID) { got = append(got, req) })
	if len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("released %v, want [2 3]", got)
	}
	if w.Hold(&r, 4, nil, load) {
		t.Fatal("held after the release with a fresh copy")
	}
}
