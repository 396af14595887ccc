// Package secrets keeps the operator's secrets (API keys, tokens,
// passwords of LAN devices), each bound to the hosts it may be sent to.
//
// Tool code and tool definitions are written by an LLM; they name a secret,
// never hold it: a request header such as
//
//	Authorization: Bearer {{secret:OPENWEATHER_KEY}}
//
// is filled in by the host with [Store.Substitute], and only for a request
// to one of the hosts the operator bound the secret to. Whatever comes
// back goes through [Store.Redact] before the guest, the journal or a log
// sees it.
//
// # Where the values live, and why
//
// The values are in one file, <data>/secrets/secrets.json, mode 0600 in a
// directory of mode 0700; [Open] refuses to use either if another user may
// read it. A Raspberry Pi running lumen has no keyring or secure element
// to lean on (no desktop session, no TPM on most boards), and the daemon
// must start unattended at boot, so anything that encrypts the file would
// have to keep its key next to it. A file only its owner (root, or the
// --user of 'lumen service install') can read is then the honest choice.
//
// Threat model. It protects the values against:
//   - other local users, who cannot read the file or list the directory;
//   - the LLM, tool code and tool definitions, which only ever see names:
//     the guest gets no file system, and responses are redacted;
//   - the journal, replies, logs and anything else an LLM may read, which
//     only ever carry "[secret NAME]";
//   - a tool sending a value to a host of its choosing: a value goes only
//     to the hosts the operator bound it to.
//
// It does not protect against root, against someone holding the SD card,
// or against a bound host itself (which receives the value by design).
//
// The values are kept in plain text in the file so that the operator can
// audit, back up or wipe it with ordinary tools; the file is written
// atomically (a temporary file, fsync, rename), so a power cut leaves the
// old or the new file, never half of one.
package secrets

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// FileName is the name of the secrets file inside the directory given to
// [Open].
const FileName = "secrets.json"

// Errors; test for them with errors.Is.
var (
	// ErrNotFound: no secret has that name.
	ErrNotFound = errors.New("no such secret")
	// ErrHostNotAllowed: a request names a secret that is not bound to
	// the request's host.
	ErrHostNotAllowed = errors.New("secret not bound to this host")
	// ErrInvalid: a name, host or value that cannot be stored.
	ErrInvalid = errors.New("invalid secret")
	// ErrUnsafePermissions: the file or directory may be read by other
	// users.
	ErrUnsafePermissions = errors.New("secrets readable by other users")
)

// Secret is one operator secret. Its Value never leaves this package
// through fmt, log/slog, JSON or YAML: they all print it as "[redacted]".
type Secret struct {
	Name  string
	Hosts []string // lowercased host names or host:port
	Value string
}

const redacted = "[redacted]"

// String describes the secret without its value.
func (s Secret) String() string {
	return fmt.Sprintf("secret %s for %s (value %s)", s.Name, strings.Join(s.Hosts, ", "), redacted)
}

// GoString is the %#v form, without the value.
func (s Secret) GoString() string {
	return fmt.Sprintf("secrets.Secret{Name:%q, Hosts:%#v, Value:%q}", s.Name, s.Hosts, redacted)
}

// Format makes every fmt verb (%v, %+v, %#v, %s, %q, %x, %d…) print the
// secret without its value.
func (s Secret) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, s.GoString())
	case verb == 'q':
		fmt.Fprintf(f, "%q", s.String())
	default:
		fmt.Fprint(f, s.String())
	}
}

type secretJSON struct {
	Name  string   `json:"name" yaml:"name"`
	Hosts []string `json:"hosts" yaml:"hosts"`
	Value string   `json:"value" yaml:"value"`
}

// MarshalJSON writes the name and hosts; the value is "[redacted]".
func (s Secret) MarshalJSON() ([]byte, error) {
	return json.Marshal(secretJSON{Name: s.Name, Hosts: s.Hosts, Value: redacted})
}

// MarshalYAML is MarshalJSON for gopkg.in/yaml.v3.
func (s Secret) MarshalYAML() (any, error) {
	return secretJSON{Name: s.Name, Hosts: s.Hosts, Value: redacted}, nil
}

// LogValue is the form log/slog prints: no value.
func (s Secret) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", s.Name),
		slog.String("hosts", strings.Join(s.Hosts, ",")),
		slog.String("value", redacted),
	)
}

// Info is what may be shown of a secret: never its value.
type Info struct {
	Name  string    `json:"name"`
	Hosts []string  `json:"hosts"`
	SetAt time.Time `json:"set_at"`
}
