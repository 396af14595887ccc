package house

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/lumen-home/lumen/internal/atomicfile"
	"github.com/lumen-home/lumen/nats/subject"
)

// The registry is the hub's list of Pis, kept in its data directory:
// `lumen hub pi add|rm` change it whether or not the hub runs, and a
// running hub picks each change up (its generation) within a second.

// Pi is a Pi of the house.
type Pi struct {
	Name      string    `json:"name"`
	PublicKey string    `json:"public_key"` // its nkey user
	Lights    []string  `json:"lights"`
	Added     time.Time `json:"added"`
}

// Registry is the house's Pis.
type Registry struct {
	// Generation counts the changes: the hub says which it has applied.
	Generation uint64 `json:"generation"`
	Pis        []Pi   `json:"pis"`
}

const registryFile = "registry.json"

// Dir is where a hub keeps the house's files in its data directory.
func Dir(data string) string { return filepath.Join(data, "house") }

// LoadRegistry reads the registry of a hub's data directory; none yet is
// an empty one.
func LoadRegistry(data string) (Registry, error) {
	var r Registry
	err := readJSON(filepath.Join(Dir(data), registryFile), &r)
	return r, err
}

// readJSON reads the JSON file path into v; no file leaves v as it is.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("house: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("house: %s: %w", path, err)
	}
	return nil
}

// writeJSON writes v to path as JSON, readable by its owner only.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("house: %w", err)
	}
	if err := atomicfile.WriteBytes(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("house: %s: %w", filepath.Base(path), err)
	}
	return nil
}

// Save writes the registry as the next generation.
func (r *Registry) Save(data string) error {
	r.Generation++
	return writeJSON(filepath.Join(Dir(data), registryFile), r)
}

// Add registers a Pi that runs lights and returns its nkey seed, its
// secret: the hub keeps only the public key.
func (r *Registry) Add(name string, lights []string, now time.Time) (seed string, err error) {
	if err := ValidPi(name); err != nil {
		return "", err
	}
	if r.Find(name) != nil {
		return "", fmt.Errorf("house: a Pi named %s is registered already; 'lumen hub pi rm %s' first to register it again", name, name)
	}
	if len(lights) == 0 {
		return "", errors.New("house: give the Pi's lights (--light NAME, repeatable)")
	}
	lights = slices.Clone(lights)
	for i, typed := range lights {
		l, err := subject.LightName(typed)
		if err != nil {
			return "", err
		}
		lights[i] = l
		if slices.Contains(lights[:i], l) {
			return "", fmt.Errorf("house: light %s is listed twice", l)
		}
		if owner := r.Owner(l); owner != "" {
			return "", fmt.Errorf("house: light %s is Pi %s's already; a light runs on one Pi ('lumen hub pi ls' shows them)", l, owner)
		}
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", fmt.Errorf("house: make the Pi's key: %w", err)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil {
		return "", err
	}
	s, err := kp.Seed()
	if err != nil {
		return "", err
	}
	r.Pis = append(r.Pis, Pi{Name: name, PublicKey: pub, Lights: lights, Added: now.UTC()})
	return string(s), nil
}

// Remove unregisters a Pi: it can no longer connect; the house keeps its
// history.
func (r *Registry) Remove(name string) error {
	i := slices.IndexFunc(r.Pis, func(p Pi) bool { return p.Name == name })
	if i < 0 {
		return fmt.Errorf("house: no Pi named %s; the Pis are %s", name, r.names())
	}
	r.Pis = slices.Delete(r.Pis, i, i+1)
	return nil
}

// Find returns the Pi named name, or nil.
func (r *Registry) Find(name string) *Pi {
	for i := range r.Pis {
		if r.Pis[i].Name == name {
			return &r.Pis[i]
		}
	}
	return nil
}

// Owner is the Pi that runs light, or "".
func (r *Registry) Owner(light string) string {
	for _, p := range r.Pis {
		if slices.Contains(p.Lights, light) {
			return p.Name
		}
	}
	return ""
}

func (r *Registry) names() string {
	if len(r.Pis) == 0 {
		return "none yet"
	}
	names := make([]string, len(r.Pis))
	for i, p := range r.Pis {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
