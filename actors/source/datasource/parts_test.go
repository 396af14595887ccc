package datasource_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

func TestPartsJSON(t *testing.T) {
	tests := []struct {
		name  string
		given datasource.Parts
		want  string // the JSON, or the error's start
	}{
		{"poll", datasource.Parts{Name: "w", Interval: time.Hour, Tool: "get_weather", Args: `{"location":"Paris"}`, Store: []string{"t=result.temp"}, Fires: "w_up"},
			`{"fetch":{"args":{"location":"Paris"},"tool":"get_weather"},"fires":"w_up","interval_ms":3600000,"name":"w","store":{"t":"result.temp"}}`},
		{"internal from tracks", datasource.Parts{Name: "d", Tracks: "state_duration", Interval: 30 * time.Second},
			`{"interval_ms":30000,"name":"d","tracks":"state_duration","type":"internal"}`},
		{"nats from subject", datasource.Parts{Name: "door", Subject: "home.doorbell"}, `{"name":"door","subject":"home.doorbell","type":"nats"}`},
		{"mqtt from topic", datasource.Parts{Name: "door", Topic: "home/doorbell"}, `{"name":"door","topic":"home/doorbell","type":"mqtt"}`},
		{"webhook from token", datasource.Parts{Name: "h", Token: "s3cret"}, `{"name":"h","token":"s3cret","type":"webhook"}`},
		{"a type said wins", datasource.Parts{Name: "h", Type: "webhook"}, `{"name":"h","type":"webhook"}`},
		{"bad store", datasource.Parts{Name: "w", Store: []string{"t"}}, `--store "t": give VAR=PATH`},
		{"store twice", datasource.Parts{Name: "w", Store: []string{"t=a", "t=b"}}, `--store: variable t is given twice`},
		{"bad args", datasource.Parts{Name: "w", Tool: "x", Args: "{nope"}, `--args is not JSON`},
		{"interval too short", datasource.Parts{Name: "w", Interval: time.Microsecond}, `--interval 1µs is too short`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.given.JSON()
			got := string(b)
			if err != nil {
				got = err.Error()
			}
			if got != tt.want && !(err != nil && strings.HasPrefix(got, tt.want)) {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
