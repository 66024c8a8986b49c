// Package servingcert is the webhook's own serving certificate, the way
// Gatekeeper's cert-controller and Kyverno keep theirs: a CA and a
// certificate it signs, kept in one Secret, the CA put in the caBundle of
// the webhook's configuration, renewed long before it expires. What it
// adds to theirs: every renewal is a new CA whose key is dropped once it
// has signed its one certificate (the Secret holds no key that can sign),
// and the new certificate is served only once the configuration has
// trusted its CA for a while, the old CA staying in the bundle until it
// expires, so that no replica ever serves a certificate the API server
// does not trust yet.
//
// Everything here is pure but Issue (which draws keys): what to do next
// (Decide), which CAs the bundle holds (Bundle), and the Secret's format
// (Parse, State.Data). The webhook's loop (internal/webhook) reads the
// Secret and the configuration, asks Decide, and does what it says.
package servingcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Issued is what one renewal makes: a CA and the serving certificate it
// signed. The CA's key is not kept.
type Issued struct {
	CA   *x509.Certificate
	Pair *Pair
}

// Pair is a serving certificate and its private key, as PEM and parsed.
type Pair struct {
	Cert            *x509.Certificate
	CertPEM, KeyPEM []byte
}

// MinValidity is the shortest validity Issue takes: enough for a
// renewal's steps (a few API calls and the settling time) to fit in the
// last third of it.
const MinValidity = time.Minute

// backdate is how long before now a certificate starts to be valid, for
// clocks a little behind ours (the API server's): an hour, as
// cert-controller and Kyverno do, or a tenth of a short validity.
func backdate(validity time.Duration) time.Duration { return min(time.Hour, validity/10) }

// Issue makes a new CA and a serving certificate for hosts (DNS names or
// IP addresses) signed by it, both valid until now+validity. ECDSA P-256:
// the API server and every TLS client of today take it, and a key is
// drawn in microseconds.
func Issue(hosts []string, validity time.Duration, now time.Time) (*Issued, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("a serving certificate needs at least one host")
	}
	if validity < MinValidity {
		return nil, fmt.Errorf("validity %s is shorter than %s", validity, MinValidity)
	}
	notBefore, notAfter := now.Add(-backdate(validity)).Truncate(time.Second), now.Add(validity).Truncate(time.Second)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("a CA key: %w", err)
	}
	caTemplate := &x509.Certificate{
		Subject:   pkix.Name{CommonName: "job-signal-webhook CA " + now.UTC().Format(time.RFC3339)},
		NotBefore: notBefore, NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := sign(caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("the CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("a serving key: %w", err)
	}
	leaf := &x509.Certificate{
		Subject:   pkix.Name{CommonName: hosts[0]},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	der, err := sign(leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("the serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	pair, err := ParsePair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		return nil, fmt.Errorf("the certificate just issued does not read back: %w", err)
	}
	return &Issued{CA: ca, Pair: pair}, nil
}

// sign gives template a random 128-bit serial number, as RFC 5280 asks
// (positive, at most 20 octets), and signs it with parent's key.
func sign(template, parent *x509.Certificate, pub *ecdsa.PublicKey, parentKey *ecdsa.PrivateKey) ([]byte, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("a serial number: %w", err)
	}
	template.SerialNumber = n.Add(n, big.NewInt(1))
	return x509.CreateCertificate(rand.Reader, template, parent, pub, parentKey)
}
