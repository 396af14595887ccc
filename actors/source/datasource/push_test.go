package datasource_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

func TestPushResult(t *testing.T) {
	door := datasource.Def{Name: "door", Type: datasource.TypeNATS, Subject: "home.doorbell", Fires: "doorbell"}
	tests := []struct {
		name    string
		payload string
		want    string // the result, or the error's text
		err     bool
	}{
		{"JSON object is the result", ` {"who": "Ann"} `, `{"who":"Ann"}`, false},
		{"JSON scalar", `42`, `42`, false},
		{"plain text", `ding dong`, `{"text":"ding dong"}`, false},
		{"broken JSON is text", `{"who":`, `{"text":"{\"who\":"}`, false},
		{"empty message", ``, `{"text":""}`, false},
		{"not UTF-8", "\xff\xfe", "neither JSON nor UTF-8", true},
		{"too large", `"` + strings.Repeat("x", datasource.MaxPushBytes) + `"`, "larger than 65536", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := datasource.PushResult(door, []byte(tt.payload))
			if tt.err {
				if !errors.Is(err, datasource.ErrBadResult) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("got %s, %v; want a bad-result error with %q", got, err, tt.want)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// A pushed message goes through the same store as a fetched result.
func TestPushResultValues(t *testing.T) {
	door := datasource.Def{Name: "door", Type: datasource.TypeNATS, Subject: "home.doorbell", Store: map[string]string{"who": "result.who"}}
	res, err := datasource.PushResult(door, []byte(`{"who":"Ann"}`))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := datasource.Values(door, res)
	if err != nil || len(vals) != 1 || string(vals["who"]) != `"Ann"` {
		t.Fatalf("values %s, %v", vals, err)
	}
	res, _ = datasource.PushResult(door, []byte(`hello`))
	if _, err := datasource.Values(door, res); !errors.Is(err, datasource.ErrBadResult) {
		t.Fatalf("text without who: %v, want a bad-result error", err)
	}
}
