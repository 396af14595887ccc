package secrets_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/plugins/secrets"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func open(t *testing.T) (*secrets.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "secrets")
	s, err := secrets.Open(dir, secrets.WithClock(clocktest.New(t0)))
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func mustSet(t *testing.T, s *secrets.Store, name string, hosts []string, value string) {
	t.Helper()
	if err := s.Set(name, hosts, value); err != nil {
		t.Fatal(err)
	}
}

func TestRoundTrip(t *testing.T) {
	s, dir := open(t)
	if got := s.List(); len(got) != 0 {
		t.Fatalf("new store lists %v", got)
	}
	mustSet(t, s, "WEATHER_KEY", []string{"API.OpenWeatherMap.org.", "api.openweathermap.org"}, "k-123456")
	mustSet(t, s, "HUE", []string{"192.168.1.20:8080", "[::1]:443"}, "hue-token")
	mustSet(t, s, "WEATHER_KEY", []string{"api.openweathermap.org"}, "k-654321") // replaces

	want := []secrets.Info{
		{Name: "HUE", Hosts: []string{"192.168.1.20:8080", "[::1]:443"}, SetAt: t0},
		{Name: "WEATHER_KEY", Hosts: []string{"api.openweathermap.org"}, SetAt: t0},
	}
	if got := s.List(); !reflect.DeepEqual(got, want) {
		t.Fatalf("List = %+v, want %+v", got, want)
	}

	// Another store on the same directory (the daemon) sees the same.
	other, err := secrets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := other.List(); !reflect.DeepEqual(got, want) {
		t.Fatalf("reopened List = %+v, want %+v", got, want)
	}
	if got, err := other.Substitute("api.openweathermap.org:443", "{{secret:WEATHER_KEY}}"); err != nil || got != "k-654321" {
		t.Fatalf("reopened Substitute = %q, %v", got, err)
	}

	if err := s.Delete("HUE"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("HUE"); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatalf("second Delete: %v, want ErrNotFound", err)
	}
	if err := other.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := other.List(); len(got) != 1 || got[0].Name != "WEATHER_KEY" {
		t.Fatalf("after Delete and Reload: %+v", got)
	}

	// Reload sees a file removed by hand as no secrets.
	if err := os.Remove(filepath.Join(dir, secrets.FileName)); err != nil {
		t.Fatal(err)
	}
	if err := other.Reload(); err != nil || len(other.List()) != 0 {
		t.Fatalf("after removing the file: %v, %+v", err, other.List())
	}
}

func TestModes(t *testing.T) {
	s, dir := open(t)
	mustSet(t, s, "A_KEY", []string{"example.com"}, "value-1")
	for _, tt := range []struct {
		path string
		want os.FileMode
	}{{dir, 0o700}, {filepath.Join(dir, secrets.FileName), 0o600}} {
		fi, err := os.Stat(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != tt.want {
			t.Errorf("%s: mode %v, want %v", tt.path, fi.Mode().Perm(), tt.want)
		}
	}
	// No temporary file is left behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("dir holds %d entries, want only %s", len(ents), secrets.FileName)
	}
}

func TestRefusesUnsafeModes(t *testing.T) {
	tests := []struct {
		name    string
		dirMode os.FileMode
		file    os.FileMode
		want    string
	}{
		{name: "world-readable file", dirMode: 0o700, file: 0o644, want: "chmod 600"},
		{name: "group-readable file", dirMode: 0o700, file: 0o640, want: "chmod 600"},
		{name: "world-readable dir", dirMode: 0o755, file: 0o600, want: "chmod 700"},
		{name: "group-writable dir", dirMode: 0o770, file: 0o600, want: "chmod 700"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := open(t)
			mustSet(t, s, "A_KEY", []string{"example.com"}, "value-1")
			if err := os.Chmod(filepath.Join(dir, secrets.FileName), tt.file); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.dirMode); err != nil {
				t.Fatal(err)
			}
			_, err := secrets.Open(dir)
			if !errors.Is(err, secrets.ErrUnsafePermissions) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open: %v, want ErrUnsafePermissions saying %q", err, tt.want)
			}
			// A running store refuses to reload it and keeps what it had.
			if err := s.Reload(); !errors.Is(err, secrets.ErrUnsafePermissions) {
				t.Fatalf("Reload: %v", err)
			}
			if got, err := s.Substitute("example.com", "{{secret:A_KEY}}"); err != nil || got != "value-1" {
				t.Fatalf("after a refused Reload: %q, %v", got, err)
			}
			if err := s.Set("B_KEY", []string{"example.com"}, "value-2"); !errors.Is(err, secrets.ErrUnsafePermissions) {
				t.Fatalf("Set: %v", err)
			}
		})
	}
}

func TestRefusesSymlink(t *testing.T) {
	_, dir := open(t)
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(target, []byte(`{"version":1,"secrets":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, secrets.FileName)); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Open: %v", err)
	}
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name  string
		given struct {
			name  string
			hosts []string
			value string
		}
		want string // substring of the error; "" for none
	}{
		{name: "ok", given: sv("OPENWEATHER_KEY", "api.openweathermap.org", "abcd")},
		{name: "ok 64 characters", given: sv("A"+strings.Repeat("B", 63), "example.com", "abcd")},
		{name: "ok host:port", given: sv("K", "Example.COM:8443", "abcd")},
		{name: "ok IPv4", given: sv("K", "10.0.0.7", "abcd")},
		{name: "ok IPv6", given: sv("K", "[FE80::1]:80", "abcd")},
		{name: "lower-case name", given: sv("weather", "example.com", "abcd"), want: "upper-case"},
		{name: "leading digit", given: sv("1KEY", "example.com", "abcd"), want: "upper-case"},
		{name: "dash in name", given: sv("MY-KEY", "example.com", "abcd"), want: "upper-case"},
		{name: "65 characters", given: sv("A"+strings.Repeat("B", 64), "example.com", "abcd"), want: "upper-case"},
		{name: "empty name", given: sv("", "example.com", "abcd"), want: "upper-case"},
		{name: "no host", given: sv("K", "", "abcd"), want: "at least one host"},
		{name: "URL for a host", given: sv("K", "https://example.com", "abcd"), want: "without scheme"},
		{name: "path", given: sv("K", "example.com/api", "abcd"), want: "without scheme"},
		{name: "wildcard", given: sv("K", "*.example.com", "abcd"), want: "wildcard"},
		{name: "user info", given: sv("K", "me@example.com", "abcd"), want: "without scheme"},
		{name: "bad port", given: sv("K", "example.com:99999", "abcd"), want: "1 to 65535"},
		{name: "empty port", given: sv("K", "example.com:", "abcd"), want: "port is missing"},
		{name: "bad character", given: sv("K", "exa$mple.com", "abcd"), want: "not allowed"},
		{name: "leading dash", given: sv("K", "-example.com", "abcd"), want: "start or end"},
		{name: "empty label", given: sv("K", "example..com", "abcd"), want: "1 to 63"},
		{name: "not an IP", given: sv("K", "300.1.1.1", "abcd"), want: "neither"},
		{name: "IPv6 zone", given: sv("K", "[fe80::1%eth0]:80", "abcd"), want: "zone"},
		{name: "empty value", given: sv("K", "example.com", ""), want: "shorter than"},
		{name: "short value", given: sv("K", "example.com", "abc"), want: "shorter than"},
		{name: "newline in value", given: sv("K", "example.com", "abcd\nefgh"), want: "control character"},
		{name: "long value", given: sv("K", "example.com", strings.Repeat("x", secrets.MaxValueLen+1)), want: "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := open(t)
			var hosts []string
			if tt.given.hosts[0] != "" {
				hosts = tt.given.hosts
			}
			err := s.Set(tt.given.name, hosts, tt.given.value)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Set: %v", err)
			case tt.want != "" && (!errors.Is(err, secrets.ErrInvalid) || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Set: %v, want ErrInvalid saying %q", err, tt.want)
			case tt.want != "" && len(s.List()) != 0:
				t.Fatal("an invalid secret was stored")
			}
		})
	}
}

func sv(name, host, value string) struct {
	name  string
	hosts []string
	value string
} {
	return struct {
		name  string
		hosts []string
		value string
	}{name, []string{host}, value}
}

func TestSubstitute(t *testing.T) {
	s, _ := open(t)
	mustSet(t, s, "WEATHER_KEY", []string{"api.openweathermap.org"}, "w-secret-1")
	mustSet(t, s, "HUE", []string{"192.168.1.20:8080"}, "h-secret-2")

	tests := []struct {
		name  string
		host  string
		text  string
		want  string
		isErr error
	}{
		{name: "bound host", host: "api.openweathermap.org", text: "Bearer {{secret:WEATHER_KEY}}", want: "Bearer w-secret-1"},
		{name: "bound host, any port, other case", host: "API.openweathermap.org.:443", text: "{{ secret:WEATHER_KEY }}", want: "w-secret-1"},
		{name: "twice", host: "api.openweathermap.org", text: "a={{secret:WEATHER_KEY}}&b={{secret:WEATHER_KEY}}", want: "a=w-secret-1&b=w-secret-1"},
		{name: "bound port", host: "192.168.1.20:8080", text: "{{secret:HUE}}", want: "h-secret-2"},
		{name: "no reference", host: "anywhere.example", text: "plain {{text}}", want: "plain {{text}}"},
		{name: "other host", host: "evil.example.com", text: "Bearer {{secret:WEATHER_KEY}}", isErr: secrets.ErrHostNotAllowed},
		{name: "suffix of a bound host", host: "openweathermap.org", text: "{{secret:WEATHER_KEY}}", isErr: secrets.ErrHostNotAllowed},
		{name: "bound host as a prefix", host: "api.openweathermap.org.evil.com", text: "{{secret:WEATHER_KEY}}", isErr: secrets.ErrHostNotAllowed},
		{name: "other port", host: "192.168.1.20:80", text: "{{secret:HUE}}", isErr: secrets.ErrHostNotAllowed},
		{name: "no port for a port binding", host: "192.168.1.20", text: "{{secret:HUE}}", isErr: secrets.ErrHostNotAllowed},
		{name: "one allowed, one not", host: "api.openweathermap.org", text: "{{secret:WEATHER_KEY}} {{secret:HUE}}", isErr: secrets.ErrHostNotAllowed},
		{name: "unknown", host: "api.openweathermap.org", text: "{{secret:NOPE}}", isErr: secrets.ErrNotFound},
		{name: "unclosed", host: "api.openweathermap.org", text: "{{secret:WEATHER_KEY}", isErr: secrets.ErrInvalid},
		{name: "bad request host", host: "https://api.openweathermap.org", text: "{{secret:WEATHER_KEY}}", isErr: secrets.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Substitute(tt.host, tt.text)
			if tt.isErr != nil {
				if !errors.Is(err, tt.isErr) {
					t.Fatalf("Substitute: %q, %v; want %v", got, err, tt.isErr)
				}
				if got != "" || strings.Contains(err.Error(), "w-secret-1") || strings.Contains(err.Error(), "h-secret-2") {
					t.Fatalf("a failed Substitute leaked: %q, %v", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Substitute = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	s, _ := open(t)
	const v = "s3cr3t/v@lue+x"
	mustSet(t, s, "KEY", []string{"example.com"}, v)
	mustSet(t, s, "OTHER", []string{"example.com"}, "another-one")
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct {
		name  string
		given string
		want  string
	}{
		{name: "plain", given: `{"echo":"Bearer ` + v + `"}`, want: `{"echo":"Bearer [secret KEY]"}`},
		{name: "two secrets", given: v + " " + "another-one", want: "[secret KEY] [secret OTHER]"},
		{name: "base64", given: "x=" + b64([]byte(v)), want: "x=[secret KEY]"},
		{name: "base64 url", given: base64.RawURLEncoding.EncodeToString([]byte(v)), want: "[secret KEY]"},
		{name: "query escaped", given: "?key=" + url.QueryEscape(v), want: "?key=[secret KEY]"},
		{name: "path escaped", given: "/k/" + url.PathEscape(v), want: "/k/[secret KEY]"},
		{name: "lower-case percent", given: strings.ToLower(url.QueryEscape(v)), want: "[secret KEY]"},
		{name: "JSON escaped slash", given: strings.ReplaceAll(v, "/", `\/`), want: "[secret KEY]"},
		{name: "nothing", given: "hello", want: "hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(s.Redact([]byte(tt.given))); got != tt.want {
				t.Fatalf("Redact(%q) = %q, want %q", tt.given, got, tt.want)
			}
		})
	}
	// Inside a longer base64 text, at every alignment: HTTP Basic
	// credentials "user:VALUE".
	for _, user := range []string{"u", "us", "usr", "user"} {
		enc := b64([]byte(user + ":" + v + "!"))
		got := string(s.Redact([]byte("Authorization: Basic " + enc)))
		_, rest, found := strings.Cut(got, "[secret KEY]")
		if !found {
			t.Errorf("Basic %s:…: %q not redacted", user, got)
		} else if len(rest) > 4 {
			t.Errorf("Basic %s:…: too much left after the redaction: %q", user, got)
		}
	}
}

func TestSecretNeverPrinted(t *testing.T) {
	sec := secrets.Secret{Name: "KEY", Hosts: []string{"example.com"}, Value: "hunter2-value"}
	type wrapper struct{ S secrets.Secret }
	js, err := json.Marshal(sec)
	if err != nil {
		t.Fatal(err)
	}
	jw, err := json.Marshal(wrapper{sec})
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "secret", sec)
	for _, out := range []string{
		fmt.Sprintf("%v %+v %#v", sec, sec, sec),
		fmt.Sprintf("%s %q %x %d", sec, sec, sec, sec),
		fmt.Sprintf("%v %+v %#v", &sec, wrapper{sec}, wrapper{sec}),
		fmt.Sprint(sec), fmt.Sprintln(sec),
		string(js), string(jw), logged.String(),
	} {
		if strings.Contains(out, "hunter2") {
			t.Errorf("value printed: %s", out)
		}
		if !strings.Contains(out, "KEY") {
			t.Errorf("name not printed: %s", out)
		}
	}
}

func TestConcurrent(t *testing.T) {
	s, dir := open(t)
	mustSet(t, s, "BASE", []string{"example.com"}, "base-value")
	daemon, err := secrets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("K%d", i)
			for j := range 20 {
				if err := s.Set(name, []string{"example.com"}, fmt.Sprintf("value-%d-%d", i, j)); err != nil {
					t.Error(err)
					return
				}
				if got, err := s.Substitute("example.com", "{{secret:BASE}}"); err != nil || got != "base-value" {
					t.Errorf("Substitute: %q, %v", got, err)
				}
				_ = s.Redact([]byte("x base-value y"))
				_ = s.List()
				if err := daemon.Reload(); err != nil {
					t.Error(err)
				}
				_ = daemon.Redact([]byte("value-1-1"))
				if j%5 == 4 {
					if err := s.Delete(name); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := daemon.Reload(); err != nil {
		t.Fatal(err)
	}
	if got, want := len(daemon.List()), len(s.List()); got != want || got != 1 {
		t.Fatalf("daemon sees %d secrets, writer %d, want 1 (every K deleted last)", got, want)
	}
}
