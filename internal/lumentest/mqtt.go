package lumentest

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// MQTTClient is just enough of MQTT 3.1.1 to publish at QoS 0: CONNECT,
// PUBLISH, and PINGREQ, whose answer tells that the server has read
// every publish sent before it. Tests publish with it to the embedded
// server's MQTT listener.
type MQTTClient struct {
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

// DialMQTT connects to addr as clientID, with user and password when
// user is not empty, and fails tb unless the server accepts.
func DialMQTT(tb testing.TB, addr, clientID, user, password string) *MQTTClient {
	tb.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	c := &MQTTClient{conn: conn, r: bufio.NewReader(conn)}
	// Variable header: protocol name, level 4 (3.1.1), flags (clean
	// session; user name and password when given), keep-alive 60 s;
	// payload: the client id, then the credentials.
	flags := byte(0x02)
	if user != "" {
		flags |= 0xC0
	}
	connect := append(mqttString("MQTT"), 4, flags, 0, 60)
	connect = append(connect, mqttString(clientID)...)
	if user != "" {
		connect = append(connect, mqttString(user)...)
		connect = append(connect, mqttString(password)...)
	}
	c.write(tb, mqttPacket(0x10, connect))
	if ack := c.read(tb, 4); ack[0] != 0x20 || ack[1] != 2 || ack[3] != 0 {
		tb.Fatalf("CONNACK % x, want 20 02 00 00", ack)
	}
	return c
}

func (c *MQTTClient) write(tb testing.TB, b []byte) {
	tb.Helper()
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write(b); err != nil {
		tb.Fatalf("mqtt write: %v", err)
	}
}

func (c *MQTTClient) read(tb testing.TB, n int) []byte {
	tb.Helper()
	b := make([]byte, n)
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c.r, b); err != nil {
		tb.Fatalf("mqtt read: %v", err)
	}
	return b
}

// Publish sends a QoS 0 PUBLISH and waits for a PINGRESP, so the server
// has passed the message on when it returns.
func (c *MQTTClient) Publish(tb testing.TB, topic, payload string) {
	tb.Helper()
	c.write(tb, mqttPacket(0x30, append(mqttString(topic), payload...)))
	c.write(tb, []byte{0xC0, 0})
	if b := c.read(tb, 2); b[0] != 0xD0 || b[1] != 0 {
		tb.Fatalf("PINGRESP % x", b)
	}
}
