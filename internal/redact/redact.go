// Package redact takes the secrets out of URLs before a person sees them:
// a server URL may carry a user and password (nats://admin:s3cr3t@hub) or
// a token (nats://s3cr3t@hub), and every error and log line that prints
// one goes through URLs.
package redact

import (
	"regexp"
	"strings"
)

// Hidden stands for what was taken out.
const Hidden = "xxxxx"

// userinfo matches a URL's scheme and user info, up to the '@' before
// its host: what stands between "://" and the host is a user, a user and
// password, or a token.
var userinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)([^/?#@\s"'<>]+)@`)

// URLs returns s with the user info of every URL in it redacted: a
// password is replaced by Hidden and the user kept (admin:xxxxx@), a
// lone user, which may be a token, is replaced whole (xxxxx@).
func URLs(s string) string {
	if !strings.Contains(s, "@") {
		return s // the common case: nothing to redact, no allocation
	}
	return userinfo.ReplaceAllStringFunc(s, func(m string) string {
		i := strings.Index(m, "://") + 3
		user, _, hasPassword := strings.Cut(m[i:len(m)-1], ":")
		if !hasPassword {
			user = Hidden
		} else {
			user += ":" + Hidden
		}
		return m[:i] + user + "@"
	})
}
