package datasource_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

// The seed's Bitcoin source: each result sets btc_price, and the light
// keeps the previous one in btc_price_prev, for the rules
// getData('btc_price') > getData('btc_price_prev') → green.
func Example() {
	def, err := datasource.Decode([]byte(`{
		"name": "bitcoin",
		"interval_ms": 60000,
		"fetch": {"tool": "get_bitcoin_price", "args": {}},
		"store": {"btc_price": "result.price"},
		"fires": "bitcoin_updated"
	}`), datasource.WithTools("fetch_json", "get_bitcoin_price"))
	if err != nil {
		fmt.Println(err)
		return
	}
	// Each result is one run, journaled as the light's data input
	// {"source","vars"}; the light keeps btc_price_prev and fires.
	for _, result := range []string{`{"price":66950}`, `{"price":67012.5}`, `{"error":"rate limited"}`} {
		vals, err := datasource.Values(def, json.RawMessage(result))
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("store btc_price=%s, then fire %s\n", vals["btc_price"], def.Fires)
	}

	last := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	next := datasource.Next(def, last, datasource.Seed("kitchen", def.Name))
	fmt.Println("next run", next.Sub(last).Round(time.Millisecond))
	fmt.Println("due 30 s after a run:", datasource.Due(def, last, last.Add(30*time.Second)))
	fmt.Println("retries after 1, 2, 3 failures:", datasource.Backoff(1, def.Interval()), datasource.Backoff(2, def.Interval()), datasource.Backoff(3, def.Interval()))
	// Output:
	// store btc_price=66950, then fire bitcoin_updated
	// store btc_price=67012.5, then fire bitcoin_updated
	// source: source "bitcoin" could not store btc_price: result has no key "price" (it has error); the last values are kept. Fix the store paths or the tool's result
	// next run 1m0.273s
	// due 30 s after a run: false
	// retries after 1, 2, 3 failures: 5s 10s 20s
}
