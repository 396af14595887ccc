package house

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lumen-home/lumen/internal/atomicfile"
)

// The house CA: made at the hub's first start (or first `pi add`), kept
// in the hub's data directory, given to each Pi in its creds. It signs
// the hub's leaf certificate; a Pi refuses a hub it did not sign.

// CA is the house's certificate authority.
type CA struct {
	Cert *x509.Certificate
	PEM  []byte // the certificate, for creds
	key  *ecdsa.PrivateKey
}

const (
	caFile    = "ca.pem"
	caKeyFile = "ca-key.pem"
	caYears   = 20
	certDays  = 397 // what clients accept of a leaf certificate
)

// EnsureCA returns the house CA kept in dir, making it the first time.
func EnsureCA(dir string) (*CA, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, caFile))
	if errors.Is(err, os.ErrNotExist) {
		return newCA(dir)
	} else if err != nil {
		return nil, fmt.Errorf("house: CA: %w", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, caKeyFile))
	if err != nil {
		return nil, fmt.Errorf("house: CA key: %w", err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("house: %s or %s in %s is not PEM", caFile, caKeyFile, dir)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("house: CA: %w", err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("house: CA key: %w", err)
	}
	return &CA{Cert: cert, PEM: certPEM, key: key}, nil
}

func newCA(dir string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("house: CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "Lumen house CA", Organization: []string{"Lumen"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(caYears, 0, 0),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("house: CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("house: %w", err)
	}
	// The key first: a CA certificate without its key would be kept.
	if err := atomicfile.WriteBytes(filepath.Join(dir, caKeyFile), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, fmt.Errorf("house: CA key: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := atomicfile.WriteBytes(filepath.Join(dir, caFile), certPEM, 0o644); err != nil {
		return nil, fmt.Errorf("house: CA: %w", err)
	}
	return &CA{Cert: cert, PEM: certPEM, key: key}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// ServerCert makes the hub's leaf certificate for hosts (names and IP
// addresses), signed by the CA. It is made anew at each start, so a new
// --san or a renamed host is covered at once.
func (ca *CA) ServerCert(hosts []string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("house: hub key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "Lumen hub", Organization: []string{"Lumen"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(0, 0, certDays),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("house: hub certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: key}, nil
}

// HubHosts are the names and addresses the hub's certificate covers:
// loopback, this machine's name (and its .local), the leaf listener's
// host when it names one, and extra (--san).
func HubHosts(leafHost string, extra []string) []string {
	hosts := []string{"127.0.0.1", "::1", "localhost"}
	if name, err := os.Hostname(); err == nil && name != "" {
		hosts = append(hosts, name)
		if !strings.Contains(name, ".") {
			hosts = append(hosts, name+".local")
		}
	}
	if ip := net.ParseIP(leafHost); leafHost != "" && (ip == nil || !ip.IsUnspecified()) {
		hosts = append(hosts, leafHost)
	}
	hosts = append(hosts, extra...)
	slices.Sort(hosts)
	return slices.Compact(hosts)
}
