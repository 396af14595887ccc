package plugins

// HostTarget is this machine's target as the cache spells it.
func HostTarget() string { return hostTarget() }

// Instantiate makes a store and an instance as a call does, without
// running the guest: the baseline a call is measured against.
func (e *Engine) Instantiate() error {
	<-e.ready
	if e.err != nil {
		return e.err
	}
	store, _, err := e.instantiate(&state{clock: e.cfg.Clock, log: logBuf{max: e.cfg.MaxLog}}, e.cfg.Timeout)
	store.Close()
	return err
}
