// Package metricstest reads a /metrics page as Prometheus does (the text
// format, parsed by Prometheus's own parser), for tests.
package metricstest

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one read of the metrics, by family name.
type Scrape map[string]*dto.MetricFamily

// Parse reads the Prometheus text format.
func Parse(r io.Reader) (Scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("metricstest: %w", err)
	}
	return fams, nil
}

// Get scrapes url (with HTTP Basic when user is set), failing tb unless
// it answers 200 with metrics.
func Get(tb testing.TB, url, user, password string) Scrape {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		tb.Fatalf("GET %s: %s\n%s", url, res.Status, b)
	}
	s, err := Parse(res.Body)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	return s
}

// Must is Value, failing tb when there is no such series.
func (s Scrape) Must(tb testing.TB, name string, labels ...string) float64 {
	tb.Helper()
	v, ok := s.Value(name, labels...)
	if !ok {
		tb.Fatalf("no %s%v in the scrape", name, labels)
	}
	return v
}

// Value is the value of the counter or gauge name whose labels include
// labels (name, value pairs), or a histogram's count of observations;
// ok is false when there is no such series.
func (s Scrape) Value(name string, labels ...string) (v float64, ok bool) {
	m := s.Series(name, labels...)
	switch {
	case m == nil:
		return 0, false
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount()), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

// Series is name's first series whose labels include labels (name,
// value pairs); nil when there is none.
func (s Scrape) Series(name string, labels ...string) *dto.Metric {
	f := s[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, p := range m.Label {
				if p.GetName() == labels[i] && p.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	return nil
}
