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

	topic, payload := "home/doorbell", "ding"
	mqttPublish(t, addr, "", "", topic, payload)
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("the publish did not reach the daemon: %v", err)
	}
	if string(m.Data) != payload {
		t.Fatalf("payload %q, want %q", m.Data, payload)
	}
}

// mqttPublish connects to an MQTT listener (with user and password when
// user is set) and publishes payload on topic at QoS 0.
func mqttPublish(t *testing.T, addr, user, password, topic, payload string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	str := func(s string) []byte { return append([]byte{byte(len(s) >> 8), byte(len(s))}, s...) }
	// CONNECT: protocol "MQTT" level 4, clean session, keep-alive 60 s,
	// client id "t".
	flags := byte(0x02)
	body := str("t")
	if user != "" {
		flags |= 0xC0
		body = append(append(body, str(user)...), str(password)...)
	}
	vh := append(append(str("MQTT"), 4, flags), 0, 60)
	connect := append([]byte{0x10, byte(len(vh) + len(body))}, append(vh, body...)...)
	if _, err := conn.Write(connect); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	ack := make([]byte, 4)
	if _, err := io.ReadFull(r, ack); err != nil || ack[0] != 0x20 || ack[3] != 0 {
		t.Fatalf("CONNACK % x, %v", ack, err)
	}
	pub := append([]byte{0x30, byte(2 + len(topic) + len(payload))}, str(topic)...)
	if _, err := conn.Write(append(pub, payload...)); err != nil {
		t.Fatal(err)
	}
}
