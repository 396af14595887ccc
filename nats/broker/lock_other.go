//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package broker

// dirLock is a no-op where flock is unavailable: only one server per data
// directory is then the operator's responsibility.
type dirLock struct{}

func lockDir(string) (*dirLock, error) { return &dirLock{}, nil }

func (*dirLock) release() {}

// InUse cannot tell where flock is unavailable: it reports false.
func InUse(string) bool { return false }
