// Package testcert writes self-signed serving (and client) certificates
// for tests that run a TLS server on 127.0.0.1 (the webhook).
package testcert

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
	"os"
	"time"
)

// Write writes a self-signed certificate for 127.0.0.1 named cn, valid for
// an hour, to certFile and its key to keyFile (the key first: a reader
// that sees the new certificate with the old key fails and keeps the
// previous pair), and returns the certificate, which is its own CA.
func Write(certFile, keyFile, cn string) (*x509.Certificate, error) {
	return write(certFile, keyFile, cn, x509.ExtKeyUsageServerAuth)
}

// WriteClient is Write for a client certificate (its own CA too): put
// certFile in a server's client CAs and present the pair.
func WriteClient(certFile, keyFile, cn string) (*x509.Certificate, error) {
	return write(certFile, keyFile, cn, x509.ExtKeyUsageClientAuth)
}

func write(certFile, keyFile, cn string, usage x509.ExtKeyUsage) (*x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, fmt.Errorf("write key: %w", err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, fmt.Errorf("write certificate: %w", err)
	}
	return x509.ParseCertificate(der)
}
