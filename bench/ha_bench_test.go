package bench

import (
	"fmt"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// BenchmarkHomeAssistantToLED measures a command of Home Assistant, from
// its publish on the light's command topic of a real Mosquitto to the
// LED's announcement of the state it asked, against the same change
// sent as set_state over NATS, interleaved in one run (ratio: goal at
// most 2×).
func BenchmarkHomeAssistantToLED(b *testing.B) {
	broker := lumentest.StartMosquitto(b, "", "")
	d := startDaemon(b, b.TempDir(), "--light", benchLight, "--sync", "batch", "--ha-mqtt", broker.URL())
	nc := connect(b, d.URL)
	mustCommand(b, nc, "apply", []byte(`{"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],"rules":[],"state":"blue"}`))
	o := mqtt.NewClientOptions().AddBroker("tcp://" + broker.Addr).SetClientID(fmt.Sprintf("bench-%d", time.Now().UnixNano()))
	ha := mqtt.NewClient(o)
	if tok := ha.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		b.Fatal(tok.Error())
	}
	b.Cleanup(func() { ha.Disconnect(100) })
	online := make(chan struct{}, 1)
	ha.Subscribe("lumen/"+benchLight+"/state", 1, func(mqtt.Client, mqtt.Message) {
		select {
		case online <- struct{}{}:
		default:
		}
	}).Wait()
	select { // the bridge is connected and follows the light
	case <-online:
	case <-time.After(30 * time.Second):
		b.Fatal("the bridge never published the light's state")
	}
	leds := followLED(b, nc, 256)
	targets := []string{"red", "blue"}
	i := 0
	step := func(viaHA bool) time.Duration {
		want := targets[i%2]
		i++
		start := time.Now()
		if viaHA {
			ha.Publish("lumen/"+benchLight+"/set", 1, false, `{"effect":"`+want+`"}`)
		} else {
			go func() { _, _ = command(nc, messages.VerbSetState, []byte(`{"name":"`+want+`"}`)) }()
		}
		awaitLED(b, leds, want, func(ev messages.LEDEvent) bool { return ev.State == want })
		return time.Since(start)
	}
	for range 6 {
		step(true)
		step(false)
	}
	viaHA, viaNATS := make(latencies, 0, b.N), make(latencies, 0, b.N)
	b.ResetTimer()
	for range b.N {
		viaHA = append(viaHA, step(true))
		viaNATS = append(viaNATS, step(false))
	}
	b.StopTimer()
	viaHA.report(b, "ha-")
	viaNATS.report(b, "set_state-")
	hs, ns := sorted(viaHA), sorted(viaNATS)
	b.ReportMetric(float64(percentile(hs, 50))/float64(percentile(ns, 50)), "p50-ratio")
}
