package plugins

import (
	"context"
	"sync"
	"time"
)

// Lazy is an Engine started on its first call: a compiled guest holds
// about 30 MB, which a light without tools should not pay. Warm compiles
// the guest into the disk cache beforehand, so that the first call only
// loads it.
type Lazy struct {
	cfg Config

	mu     sync.Mutex
	e      *Engine
	closed bool
}

// NewLazy returns an engine of cfg that starts on its first Run.
func NewLazy(cfg Config) *Lazy { return &Lazy{cfg: cfg} }

// Warm compiles the guest into the disk cache in the background, unless
// it is there already, reporting progress every so often; the compiled
// module is then released (the cache keeps it for the first Run). The
// channel is closed when it is done.
func (l *Lazy) Warm(every time.Duration, progress func(Progress)) <-chan struct{} {
	cfg := l.cfg
	cfg.Progress, cfg.ProgressEvery = progress, every
	e := Start(cfg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-e.Ready()
		e.Close()
	}()
	return done
}

// Run runs req, starting the engine on the first call.
func (l *Lazy) Run(ctx context.Context, req Request) (Result, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return Result{}, ErrClosed
	}
	if l.e == nil {
		l.e = Start(l.cfg)
	}
	e := l.e
	l.mu.Unlock()
	return e.Run(ctx, req)
}

// Close releases the engine, if it started.
func (l *Lazy) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.e != nil {
		l.e.Close()
	}
}
