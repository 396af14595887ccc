package wire_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Discover finds every light's service instance, with its groups, and
// RequestAll asks each of them.
func TestDiscoverAndRequestAll(t *testing.T) {
	nc := connect(t)
	for _, l := range []struct {
		name   string
		groups []string
	}{{"kitchen", []string{"down", "all"}}, {"hall", nil}} {
		svc, err := micro.AddService(nc, micro.Config{Name: subject.Service, Version: "0.1.0", Metadata: map[string]string{"light": l.name}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = svc.Stop() })
		h := micro.HandlerFunc(func(req micro.Request) { _ = req.Respond([]byte(`{"ok":true,"light":"` + l.name + `"}`)) })
		if err := svc.AddGroup(subject.CmdPrefix(l.name)).AddEndpoint("get", h); err != nil {
			t.Fatal(err)
		}
		for _, g := range l.groups {
			if err := svc.AddGroup(subject.GroupCmdPrefix(g), micro.WithGroupQueueGroupDisabled()).AddEndpoint("group_"+g+"_get", h, micro.WithEndpointSubject("get")); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := wire.New(nc)
	got, err := c.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.Running{{Light: "hall"}, {Light: "kitchen", Groups: []string{"all", "down"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Discover = %+v, want %+v", got, want)
	}
	replies := c.RequestAll(context.Background(), []string{"kitchen", "hall", "nope"}, "get", nil)
	if len(replies) != 3 || string(replies[0].Body) != `{"ok":true,"light":"kitchen"}` || replies[1].Light != "hall" || replies[2].Err == nil {
		t.Fatalf("RequestAll = %+v", replies)
	}
}
