package netpolicy

import (
	"fmt"
	"sync"
	"time"
)

// bucket is a token bucket: it holds up to size tokens (the burst a tool
// may spend at once) and refills rate tokens per second.
type bucket struct {
	mu     sync.Mutex
	size   float64
	rate   float64
	tokens float64
	last   time.Time
}

func newBucket(perMinute int) *bucket {
	n := float64(perMinute)
	return &bucket{size: n, rate: n / 60, tokens: n}
}

// take spends a token at now, or says how long until one is available.
func (b *bucket) take(now time.Time) (wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.last.IsZero() && now.After(b.last) {
		b.tokens = min(b.size, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	if b.last.IsZero() || now.After(b.last) {
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) / b.rate * float64(time.Second)), false
}

// roundUp rounds a wait up to whole seconds, at least one.
func roundUp(d time.Duration) time.Duration {
	return max(time.Second, (d + time.Second - 1).Truncate(time.Second))
}

// size writes a byte count the way the operator configured it.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
