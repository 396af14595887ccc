package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// minCoreLen is the shortest base64 fragment redacted inside a longer
// base64 text: shorter ones would match ordinary text too often.
const minCoreLen = 6

var percentRE = regexp.MustCompile(`%[0-9A-F]{2}`)

// forms lists the ways a value may come back in a response.
func forms(v string) []string {
	out := []string{v}
	// JSON string escapes, with and without HTML escaping, and "\/".
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(v) == nil {
			s := strings.TrimSuffix(b.String(), "\n")
			s = s[1 : len(s)-1]
			out = append(out, s, strings.ReplaceAll(s, "/", `\/`))
		}
	}
	// URL encodings, with upper- and lower-case hex digits.
	for _, s := range []string{url.QueryEscape(v), url.PathEscape(v), strings.ReplaceAll(url.QueryEscape(v), "+", "%20")} {
		out = append(out, s, percentRE.ReplaceAllStringFunc(s, strings.ToLower))
	}
	// base64: whole, then as a fragment of a longer text at each of the
	// three byte alignments (e.g. "user:" + value in HTTP Basic
	// credentials), keeping only the characters the value alone decides.
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString([]byte(v)))
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k, start := range []int{0, 2, 3} {
			buf := append(make([]byte, k), v...)
			full := enc.EncodeToString(buf)
			core := full[start : len(buf)*8/6]
			if k == 0 {
				out = append(out, full)
			}
			if len(core) >= minCoreLen {
				out = append(out, core)
			}
		}
	}
	return out
}

// newRedactor builds the replacer for Redact: every form of every value,
// longest first, so a longer form wins over a shorter one at the same
// place.
func newRedactor(m map[string]entry) *strings.Replacer {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	owner := map[string]string{}
	for _, n := range names {
		for _, f := range forms(m[n].Value) {
			if _, ok := owner[f]; !ok && f != "" {
				owner[f] = n
			}
		}
	}
	if len(owner) == 0 {
		return nil
	}
	all := make([]string, 0, len(owner))
	for f := range owner {
		all = append(all, f)
	}
	sort.Slice(all, func(i, j int) bool {
		if len(all[i]) != len(all[j]) {
			return len(all[i]) > len(all[j])
		}
		return all[i] < all[j]
	})
	pairs := make([]string, 0, 2*len(all))
	for _, f := range all {
		pairs = append(pairs, f, "[secret "+owner[f]+"]")
	}
	return strings.NewReplacer(pairs...)
}
