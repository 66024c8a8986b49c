package servingcert

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// The Secret's keys. ca.crt is the bundle, exactly what the webhook
// configuration's caBundle must hold; tls.crt and tls.key are served;
// next.crt and next.key wait for the configuration to trust their CA.
const (
	KeyBundle   = "ca.crt"
	KeyCert     = "tls.crt"
	KeyKey      = "tls.key"
	KeyNextCert = "next.crt"
	KeyNextKey  = "next.key"
)

// State is what the Secret holds: the CAs to trust, the certificate
// served, and the one waiting to be (nil when none, or unreadable).
type State struct {
	Bundle []*x509.Certificate
	Served *Pair
	Next   *Pair
}

// Parse reads a Secret's data. A part that does not read is left out,
// with the reason in problems: the decisions then treat it as missing
// (a served certificate that does not read is issued anew). An empty
// Secret, as the chart renders it, is an empty State.
func Parse(data map[string][]byte) (s State, problems []error) {
	if b := data[KeyBundle]; len(b) > 0 {
		var err error
		if s.Bundle, err = ParseBundle(b); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", KeyBundle, err))
		}
	}
	pair := func(certKey, keyKey string) *Pair {
		c, k := data[certKey], data[keyKey]
		if len(c) == 0 && len(k) == 0 {
			return nil
		}
		p, err := ParsePair(c, k)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s and %s: %w", certKey, keyKey, err))
		}
		return p
	}
	s.Served = pair(KeyCert, KeyKey)
	s.Next = pair(KeyNextCert, KeyNextKey)
	return s, problems
}

// Data is the Secret's data for s: what Parse reads back as s.
func (s State) Data() map[string][]byte {
	data := map[string][]byte{KeyBundle: EncodeBundle(s.Bundle)}
	if s.Served != nil {
		data[KeyCert], data[KeyKey] = s.Served.CertPEM, s.Served.KeyPEM
	}
	if s.Next != nil {
		data[KeyNextCert], data[KeyNextKey] = s.Next.CertPEM, s.Next.KeyPEM
	}
	return data
}

// ParsePair reads a certificate and its key, and checks that they belong
// together, as the TLS server will load them.
func ParsePair(certPEM, keyPEM []byte) (*Pair, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &Pair{Cert: pair.Leaf, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// TLS is the pair as the TLS server serves it.
func (p *Pair) TLS() (*tls.Certificate, error) {
	pair, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
	return &pair, err
}

// maxBundle bounds the certificates read from a bundle: Bundle keeps at
// most three, and a caBundle written by someone else may hold a few more.
const maxBundle = 16

// ParseBundle reads PEM certificates, as the API server reads a
// caBundle: blocks of other types are skipped; one certificate that does
// not parse fails it all.
func ParseBundle(b []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for len(b) > 0 {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if len(out) == maxBundle {
			return nil, fmt.Errorf("more than %d certificates", maxBundle)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no PEM certificate in it")
	}
	return out, nil
}

// EncodeBundle is the PEM of the certificates, in order: the one text
// written to the Secret and to every caBundle, so that equal bundles are
// equal bytes.
func EncodeBundle(cas []*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range cas {
		pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.Bytes()
}
