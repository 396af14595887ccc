package clocktest_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/clock/clocktest"
)

func TestAdvanceFiresInDeadlineOrder(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := clocktest.New(start)
	var got []string
	at := func(name string) func() {
		return func() { got = append(got, name+"@"+c.Now().Sub(start).String()) }
	}
	c.AfterFunc(300*time.Millisecond, at("c"))
	c.AfterFunc(100*time.Millisecond, at("a"))
	c.AfterFunc(100*time.Millisecond, at("a2")) // a tie: arming order
	stopped := c.AfterFunc(200*time.Millisecond, at("stopped"))
	c.AfterFunc(150*time.Millisecond, func() {
		got = append(got, "b@150ms")
		c.AfterFunc(50*time.Millisecond, at("nested")) // due at 200 ms, inside this Advance
	})
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop should report true once")
	}
	if !c.WaitArmed(start.Add(100*time.Millisecond), time.Second) || c.WaitArmed(start.Add(50*time.Millisecond), 10*time.Millisecond) {
		t.Fatal("WaitArmed")
	}
	c.Advance(250 * time.Millisecond)
	want := []string{"a@100ms", "a2@100ms", "b@150ms", "nested@200ms"}
	if !reflect.DeepEqual(got, want) || c.Now() != start.Add(250*time.Millisecond) {
		t.Fatalf("got %v at %v, want %v", got, c.Now().Sub(start), want)
	}
	c.Set(start.Add(time.Second))
	if got[len(got)-1] != "c@300ms" || len(c.Pending()) != 0 {
		t.Fatalf("got %v, pending %v", got, c.Pending())
	}
	c.SetSynced(false)
	if c.Synced() {
		t.Fatal("SetSynced(false)")
	}
}
