package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
)

func TestTickerFollowsTheClock(t *testing.T) {
	start := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	c := clocktest.New(start)
	tk := clock.NewTicker(c, time.Minute)
	defer tk.Stop()
	select {
	case <-tk.C:
		t.Fatal("a tick before any time passed")
	default:
	}
	for i := 1; i <= 3; i++ {
		c.Advance(time.Minute)
		select {
		case at := <-tk.C:
			if want := start.Add(time.Duration(i) * time.Minute); !at.Equal(want) {
				t.Errorf("tick %d at %s, want %s", i, at, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no tick %d", i)
		}
	}
	tk.Stop()
	c.Advance(time.Hour)
	select {
	case <-tk.C:
		t.Error("a tick after Stop")
	default:
	}
}

func TestAfterAndSleep(t *testing.T) {
	c := clocktest.New(time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC))
	ch := clock.After(c, time.Second)
	c.Advance(time.Second)
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("After did not fire when the clock passed its time")
	}
	done := make(chan error, 1)
	go func() { done <- clock.Sleep(context.Background(), c, time.Hour) }()
	if !c.WaitArmed(c.Now().Add(time.Hour), 5*time.Second) {
		t.Fatal("Sleep armed no timer")
	}
	c.Advance(time.Hour)
	if err := <-done; err != nil {
		t.Errorf("Sleep: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := clock.Sleep(ctx, c, time.Hour); err == nil {
		t.Error("Sleep past a cancelled context returned no error")
	}
}
