package redact_test

import (
	"testing"

	"github.com/lumen-home/lumen/internal/redact"
)

func TestURLs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"no light is running at nats://admin:s3cr3t@127.0.0.1:4222; start one", "no light is running at nats://admin:xxxxx@127.0.0.1:4222; start one"},
		{"nats://s3cr3t@hub:4222", "nats://xxxxx@hub:4222"},
		{`fetch "https://u:p%40ss@api.example.com/x?a=b@c": 401`, `fetch "https://u:xxxxx@api.example.com/x?a=b@c": 401`},
		{"mqtt://door:bell@broker:1883 and tls://a:b@c:1", "mqtt://door:xxxxx@broker:1883 and tls://a:xxxxx@c:1"},
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"mail admin@example.com about http://host/a@b", "mail admin@example.com about http://host/a@b"},
		{"", ""},
	} {
		if got := redact.URLs(tc.in); got != tc.want {
			t.Errorf("URLs(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}
