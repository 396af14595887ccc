package main_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// lumen up --http says where the webhooks are, lumen source ls shows a
// webhook source's URL, and --http beyond loopback needs credentials.
// (The webhooks themselves are tested in process in actors/daemon.)
func TestWebhookSourceCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--http", "127.0.0.1:0")
	base := d.Line(t, regexp.MustCompile(`lumen: webhooks on (http://[^/\s]+)/hooks/LIGHT/SOURCE`))
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"door","type":"webhook","store":{"who":"result.who"},"fires":"doorbell"}`))
	res, err := http.Post(base+"/hooks/demo/door", "application/json", strings.NewReader(`{"who":"Ann"}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("POST to the URL the ready line gave: %d", res.StatusCode)
	}
	if out, _ := runCLI(t, d.URL, "source", "ls"); !strings.Contains(out, "door             webhook POST "+base+"/hooks/demo/door") {
		t.Errorf("source ls does not show the webhook's URL:\n%s", out)
	}

	// The HTTP port beyond loopback needs credentials, like --listen.
	out, code := runCLI(t, d.URL, "up", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--http", "0.0.0.0:0")
	if code != 2 || !strings.Contains(out, "without credentials") {
		t.Fatalf("--http 0.0.0.0:0 without credentials: exit %d: %s", code, out)
	}
}

// mqttClient is just enough of MQTT 3.1.1 to publish at QoS 0: CONNECT,
// PUBLISH, and PINGREQ, whose answer tells that the server has read
// every publish sent before it.
type mqttClient struct {
	conn net.Conn
	r    *bufio.Reader
}

// mqttString is an MQTT UTF-8 string: a 2-byte length, then the bytes.
func mqttString(s string) []byte {
	return append([]byte{byte(len(s) >> 8), byte(len(s))}, s...)
}

// mqttPacket is a control packet: its type and flags byte, the remaining
// length (a base-128 varint), then the rest.
func mqttPacket(header byte, rest []byte) []byte {
	out := []byte{header}
	n := len(rest)
	for {
		b := byte(n % 128)
		n /= 128
		if n > 0 {
			b |= 0x80
		}
		out = append(out, b)
		if n == 0 {
			break
		}
	}
	return append(out, rest...)
}

func dialMQTT(t *testing.T, addr, clientID string) *mqttClient {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &mqttClient{conn: conn, r: bufio.NewReader(conn)}
	// Variable header: protocol name, level 4 (3.1.1), flags: clean
	// session, keep-alive 60 s; payload: the client id.
	connect := append(mqttString("MQTT"), 4, 0x02, 0, 60)
	connect = append(connect, mqttString(clientID)...)
	c.write(t, mqttPacket(0x10, connect))
	ack := c.read(t, 4)
	if ack[0] != 0x20 || ack[1] != 2 || ack[3] != 0 {
		t.Fatalf("CONNACK % x, want 20 02 00 00", ack)
	}
	return c
}

func (c *mqttClient) write(t *testing.T, b []byte) {
	t.Helper()
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write(b); err != nil {
		t.Fatalf("mqtt write: %v", err)
	}
}

func (c *mqttClient) read(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c.r, b); err != nil {
		t.Fatalf("mqtt read: %v", err)
	}
	return b
}

// publish sends a QoS 0 PUBLISH and waits for a PINGRESP, so the server
// has passed the message on when it returns.
func (c *mqttClient) publish(t *testing.T, topic, payload string) {
	t.Helper()
	c.write(t, mqttPacket(0x30, append(mqttString(topic), payload...)))
	c.write(t, []byte{0xC0, 0})
	if b := c.read(t, 2); b[0] != 0xD0 || b[1] != 0 {
		t.Fatalf("PINGRESP % x", b)
	}
}
