package eval

import "testing"

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       int
	}{
		{"json", `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, 15},
		{"json without usage", `{"choices":[]}`, 0},
		{"stream", "data: {\"choices\":[{}]}\n\ndata: {\"choices\":[],\"usage\":{\"total_tokens\":42}}\n\ndata: [DONE]\n\n", 42},
		{"stream without usage", "data: {\"choices\":[{}]}\n\ndata: [DONE]\n\n", 0},
		{"garbage", "<html>", 0},
	} {
		if got := usage([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: usage = %d, want %d", tc.name, got, tc.want)
		}
	}
}
