package broker_test

import (
	"github.com/lumen-home/lumen/nats/subject"

	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/lumen-home/lumen/nats/broker"
)

// The MQTT listener is off unless asked for; when on, an MQTT 3.1.1
// client is accepted (CONNACK 0) and its QoS 0 publish to home/doorbell
// reaches the daemon as lumen.sys.mqtt.home.doorbell.
func TestMQTTListener(t *testing.T) {
	off := start(t, broker.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if a := off.MQTTAddr(); a != "" {
		t.Fatalf("MQTT is on by default: %s", a)
	}

	b := start(t, broker.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", MQTT: "127.0.0.1:0"})
	addr := b.MQTTAddr()
	if _, port, _ := net.SplitHostPort(addr); port == "" || port == "0" {
		t.Fatalf("MQTTAddr() = %q, want the port picked", addr)
	}
	nc, err := b.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// The daemon sees MQTT clients' publishes under a prefix of its
	// own account (they are in the MQTT account).
	sub, err := nc.SubscribeSync(subject.Outside("home.doorbell")[2])
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	// CONNECT: protocol "MQTT" level 4, clean session, keep-alive 60 s,
	// client id "t".
	connect := []byte{0x10, 13, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 60, 0, 1, 't'}
	if _, err := conn.Write(connect); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	ack := make([]byte, 4)
	if _, err := io.ReadFull(r, ack); err != nil || ack[0] != 0x20 || ack[3] != 0 {
		t.Fatalf("CONNACK % x, %v", ack, err)
	}
	// PUBLISH QoS 0: topic home/doorbell, payload ding.
	topic, payload := "home/doorbell", "ding"
	pub := append([]byte{0x30, byte(2 + len(topic) + len(payload)), 0, byte(len(topic))}, topic...)
	if _, err := conn.Write(append(pub, payload...)); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("the publish did not reach the daemon: %v", err)
	}
	if string(m.Data) != payload {
		t.Fatalf("payload %q, want %q", m.Data, payload)
	}
}
