package secrets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lumen-home/lumen/internal/atomicfile"
	"github.com/lumen-home/lumen/internal/clock"
)

// fileVersion is the version of the secrets file format.
const fileVersion = 1

// Store is the operator's secrets, read from and written to one file. It is
// safe for concurrent use. The daemon opens it once and calls Reload when
// the file may have changed ('lumen secret' writes it while the daemon runs).
type Store struct {
	dir, path string
	clock     clock.Clock

	mu       sync.RWMutex
	secrets  map[string]entry
	redactor *strings.Replacer // nil when there is nothing to redact
	loaded   fs.FileInfo       // the file last read; nil when there was none
}

type entry struct {
	Secret
	hosts []hostPort
	setAt time.Time
}

// An Option configures Open.
type Option func(*Store)

// WithClock sets the clock that stamps Info.SetAt (default the wall
// clock).
func WithClock(c clock.Clock) Option { return func(s *Store) { s.clock = c } }

// Open opens the secrets kept in dir (<data>/secrets), creating dir with
// mode 0700 if needed. The file FileName inside may not exist yet; Set
// creates it with mode 0600. Open refuses, with an error wrapping
// ErrUnsafePermissions, a directory or file that another user may access.
func Open(dir string, opts ...Option) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("secrets: %w: no directory given", ErrInvalid)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("secrets: cannot create %s: %w; run this as the user that runs 'lumen up' (often root: sudo)", dir, err)
		}
		return nil, fmt.Errorf("secrets: cannot create %s: %w", dir, err)
	}
	s := &Store{dir: dir, path: filepath.Join(dir, FileName), clock: clock.System(clock.Trust), secrets: map[string]entry{}}
	for _, o := range opts {
		o(s)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the secrets file.
func (s *Store) Path() string { return s.path }

// Reload reads the file again if it changed since it was last read. On an
// error (such as a file made readable by others) the store keeps the
// secrets it had.
func (s *Store) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load()
}

// Set stores a secret, replacing any of the same name, bound to hosts: host
// names or HOST:PORT (a host without a port matches any port), stored
// lower-case. The file is replaced atomically.
func (s *Store) Set(name string, hosts []string, value string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	canon, err := normalizeHosts(name, hosts)
	if err != nil {
		return err
	}
	if err := validValue(name, value); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(); err != nil { // another process may have written it
		return err
	}
	next := make(map[string]entry, len(s.secrets)+1)
	for k, v := range s.secrets {
		next[k] = v
	}
	e, err := newEntry(Secret{Name: name, Hosts: canon, Value: value}, s.clock.Now().UTC())
	if err != nil {
		return err
	}
	next[name] = e
	return s.commit(next)
}

// Delete removes a secret; the error wraps ErrNotFound if there is none of
// that name.
func (s *Store) Delete(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(); err != nil {
		return err
	}
	if _, ok := s.secrets[name]; !ok {
		return fmt.Errorf("secrets: %s: %w; 'lumen secret ls' lists them", name, ErrNotFound)
	}
	next := make(map[string]entry, len(s.secrets))
	for k, v := range s.secrets {
		if k != name {
			next[k] = v
		}
	}
	return s.commit(next)
}

// List describes the secrets, by name, without their values.
func (s *Store) List() []Info {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Info, 0, len(s.secrets))
	for _, e := range s.secrets {
		out = append(out, Info{Name: e.Name, Hosts: append([]string(nil), e.Hosts...), SetAt: e.setAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// refRE matches a reference {{secret:NAME}}, spaces allowed inside the
// braces; openRE matches its start, to catch references left unclosed.
var (
	refRE  = regexp.MustCompile(`\{\{\s*secret\s*:\s*([^{}]*?)\s*\}\}`)
	openRE = regexp.MustCompile(`\{\{\s*secret\s*:`)
)

// Substitute replaces every {{secret:NAME}} in text (a header value, a URL
// path or query, a body) with the value of NAME, for a request to host.
//
// host is where the request goes: the URL's host name with the port the
// dialer connects to ("api.example.com:443"), or without a port, which then
// matches only secrets bound without one. Call it after the URL is parsed
// and its host checked, never on the host part itself.
//
// If any reference names an unknown secret (ErrNotFound), a secret not
// bound to host (ErrHostNotAllowed), or is left unclosed (ErrInvalid),
// Substitute returns "" and an error whose sentence says what to do, and
// substitutes nothing: the request must not be sent.
func (s *Store) Substitute(host, text string) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	refs := refRE.FindAllStringSubmatchIndex(text, -1)
	if len(openRE.FindAllStringIndex(text, -1)) != len(refs) {
		return "", fmt.Errorf("secrets: %w: a {{secret:…}} reference is not closed; write {{secret:NAME}}", ErrInvalid)
	}
	if len(refs) == 0 {
		return text, nil
	}
	to, err := parseHost(host)
	if err != nil {
		return "", fmt.Errorf("secrets: request %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var b strings.Builder
	last := 0
	for _, m := range refs {
		name := text[m[2]:m[3]]
		e, ok := s.secrets[name]
		if !ok {
			return "", fmt.Errorf("secrets: {{secret:%s}}: %w; the operator adds it with 'lumen secret set %s --host HOST'", name, ErrNotFound, name)
		}
		if !e.allows(to) {
			return "", fmt.Errorf("secrets: {{secret:%s}} may be sent only to %s, not to %s: %w; the operator binds hosts with 'lumen secret set %s --host HOST'",
				name, strings.Join(e.Hosts, ", "), to, ErrHostNotAllowed, name)
		}
		b.WriteString(text[last:m[0]])
		b.WriteString(e.Value)
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// Redact replaces every occurrence of a secret's value in b, plain or in
// its JSON-escaped, URL-encoded or base64 forms (also as part of a longer
// base64 text, such as HTTP Basic credentials), with "[secret NAME]". Use
// it on whole responses (headers and body) before the guest sees them, and
// on anything journaled or logged. It may return b itself.
func (s *Store) Redact(b []byte) []byte {
	s.mu.RLock()
	r := s.redactor
	s.mu.RUnlock()
	if r == nil || len(b) == 0 {
		return b
	}
	out := r.Replace(string(b))
	if len(out) == len(b) && out == string(b) {
		return b
	}
	return []byte(out)
}

func (e entry) allows(to hostPort) bool {
	for _, h := range e.hosts {
		if h.allows(to) {
			return true
		}
	}
	return false
}

func newEntry(sec Secret, setAt time.Time) (entry, error) {
	if err := ValidName(sec.Name); err != nil {
		return entry{}, err
	}
	if err := validValue(sec.Name, sec.Value); err != nil {
		return entry{}, err
	}
	canon, err := normalizeHosts(sec.Name, sec.Hosts)
	if err != nil {
		return entry{}, err
	}
	e := entry{Secret: Secret{Name: sec.Name, Hosts: canon, Value: sec.Value}, setAt: setAt}
	for _, h := range canon {
		hp, _ := parseHost(h) // canonical, so it parses
		e.hosts = append(e.hosts, hp)
	}
	return e, nil
}

// fileData is the secrets file. Secret's own JSON form hides the value,
// so the file has its own types.
type fileData struct {
	Version int          `json:"version"`
	Secrets []fileSecret `json:"secrets"`
}

type fileSecret struct {
	Name  string    `json:"name"`
	Hosts []string  `json:"hosts"`
	Value string    `json:"value"`
	SetAt time.Time `json:"set_at"`
}

// checkMode refuses a file or directory that other users may access.
func checkMode(path string, fi fs.FileInfo, fix string) error {
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("secrets: %s has mode %s, so other users may read it: %w; fix it with '%s %s' and consider changing the secrets it holds",
			path, fi.Mode().Perm(), ErrUnsafePermissions, fix, path)
	}
	return nil
}

// load reads the file if it changed since the last load. s.mu is held.
func (s *Store) load() error {
	di, err := os.Stat(s.dir)
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	if !di.IsDir() {
		return fmt.Errorf("secrets: %s is not a directory", s.dir)
	}
	if err := checkMode(s.dir, di, "chmod 700"); err != nil {
		return err
	}
	li, err := os.Lstat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.set(map[string]entry{}, nil)
		return nil
	}
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	if !li.Mode().IsRegular() {
		return fmt.Errorf("secrets: %s is not a regular file (a link?); remove it, then set the secrets again", s.path)
	}
	f, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("secrets: cannot read %s: %w", s.path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	if err := checkMode(s.path, fi, "chmod 600"); err != nil {
		return err
	}
	if s.loaded != nil && os.SameFile(s.loaded, fi) && s.loaded.ModTime().Equal(fi.ModTime()) && s.loaded.Size() == fi.Size() {
		return nil // unchanged
	}
	var raw bytes.Buffer
	if _, err := raw.ReadFrom(f); err != nil {
		return fmt.Errorf("secrets: cannot read %s: %w", s.path, err)
	}
	next, err := parseFile(raw.Bytes())
	if err != nil {
		return fmt.Errorf("secrets: %s: %w", s.path, err)
	}
	s.set(next, fi)
	return nil
}

func parseFile(raw []byte) (map[string]entry, error) {
	var fd fileData
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fd); err != nil {
		return nil, fmt.Errorf("not a secrets file (%v)", err)
	}
	if fd.Version != fileVersion {
		return nil, fmt.Errorf("version %d, want %d", fd.Version, fileVersion)
	}
	m := make(map[string]entry, len(fd.Secrets))
	for _, rec := range fd.Secrets {
		e, err := newEntry(Secret{Name: rec.Name, Hosts: rec.Hosts, Value: rec.Value}, rec.SetAt)
		if err != nil {
			return nil, err
		}
		if _, dup := m[rec.Name]; dup {
			return nil, fmt.Errorf("secret %s is there twice", rec.Name)
		}
		m[rec.Name] = e
	}
	return m, nil
}

// commit writes next to the file, then makes it the store's state. s.mu
// is held.
func (s *Store) commit(next map[string]entry) error {
	fd := fileData{Version: fileVersion, Secrets: make([]fileSecret, 0, len(next))}
	for _, e := range next {
		fd.Secrets = append(fd.Secrets, fileSecret{Name: e.Name, Hosts: e.Hosts, Value: e.Value, SetAt: e.setAt})
	}
	sort.Slice(fd.Secrets, func(i, j int) bool { return fd.Secrets[i].Name < fd.Secrets[j].Name })
	data, err := json.MarshalIndent(fd, "", "  ")
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	if err := atomicfile.WriteBytes(s.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("secrets: cannot write %s: %w", s.path, err)
	}
	fi, err := os.Lstat(s.path)
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	s.set(next, fi)
	return nil
}

func (s *Store) set(next map[string]entry, fi fs.FileInfo) {
	s.secrets, s.loaded = next, fi
	s.redactor = newRedactor(next)
}

// Dir is where the daemon with data directory data keeps its secrets.
func Dir(data string) string { return filepath.Join(data, "secrets") }

// List lists the secrets of dir without creating it: none when it does
// not exist.
func List(dir string) ([]Info, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return []Info{}, nil
	}
	st, err := Open(dir)
	if err != nil {
		return nil, err
	}
	return st.List(), nil
}

// Remove deletes the secret name of dir, without creating dir: a bad name
// is an ErrInvalid.
func Remove(dir, name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("secrets: no secret %s: there are no secrets in %s", name, dir)
	}
	st, err := Open(dir)
	if err != nil {
		return err
	}
	return st.Delete(name)
}
