package subject

import "strconv"

// GPIO is where the hardware actor publishes, on core NATS and outside the
// journal, each debounced change of a watched input pin:
// lumen.<light>.gpio.<pin>. The light's gpio sources listen there and
// journal what they store.
func GPIO(light string, pin int) string {
	return tokRoot + "." + light + ".gpio." + strconv.Itoa(pin)
}

// AllGPIO matches the changes of every input pin of a light:
// lumen.<light>.gpio.*.
func AllGPIO(light string) string {
	return tokRoot + "." + light + ".gpio.*"
}
