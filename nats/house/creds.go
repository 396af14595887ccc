package house

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/nats-io/nkeys"

	"github.com/lumen-home/lumen/internal/atomicfile"
	"github.com/lumen-home/lumen/nats/subject"
)

// Creds is what a Pi needs to join the house, written by `lumen hub pi
// add` and read by `lumen up --creds`: its name (its JetStream domain),
// the lights it may run, its nkey seed (its secret identity at the hub)
// and the house CA that signs the hub's certificate.
type Creds struct {
	Pi     string   `json:"pi"`
	Lights []string `json:"lights"`
	Seed   string   `json:"seed"`
	CA     string   `json:"ca"` // PEM
}

// ReadCreds reads and checks a creds file.
func ReadCreds(path string) (Creds, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Creds{}, fmt.Errorf("house: creds: %w", err)
	}
	var c Creds
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Creds{}, fmt.Errorf("house: creds %s is not a file 'lumen hub pi add' wrote: %v", path, err)
	}
	if err := c.check(); err != nil {
		return Creds{}, fmt.Errorf("house: creds %s: %w", path, err)
	}
	return c, nil
}

func (c Creds) check() error {
	if err := ValidPi(c.Pi); err != nil {
		return err
	}
	if len(c.Lights) == 0 {
		return errors.New("it lists no light")
	}
	for _, l := range c.Lights {
		if err := subject.ValidLight(l); err != nil {
			return err
		}
	}
	kp, err := nkeys.FromSeed([]byte(c.Seed))
	if err != nil {
		return fmt.Errorf("its seed is not an nkey seed: %v", err)
	}
	defer kp.Wipe()
	if pub, err := kp.PublicKey(); err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return errors.New("its seed is not a user's")
	}
	_, err = c.CAPool()
	return err
}

// PublicKey is the nkey the hub knows the Pi by.
func (c Creds) PublicKey() (string, error) {
	kp, err := nkeys.FromSeed([]byte(c.Seed))
	if err != nil {
		return "", fmt.Errorf("house: creds: %w", err)
	}
	defer kp.Wipe()
	return kp.PublicKey()
}

// CAPool is the house CA, to verify the hub with.
func (c Creds) CAPool() (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(c.CA)) {
		return nil, errors.New("house: creds: no house CA certificate in it")
	}
	return pool, nil
}

// Allows reports the lights of lights the creds do not list.
func (c Creds) Allows(lights []string) (missing []string) {
	for _, l := range lights {
		if !slices.Contains(c.Lights, l) {
			missing = append(missing, l)
		}
	}
	return missing
}

// Write writes the creds, readable by their owner only: the seed is the
// Pi's secret.
func (c Creds) Write(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("house: write creds: %w", err)
	}
	return nil
}
