package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// ca is the cluster's one certificate authority: it signs the API server's
// serving certificate, every client certificate, and (IssueServingCert)
// the serving certificates of webhooks a test runs.
type ca struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

func newCA(cn string) (*ca, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &ca{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

// issue signs a leaf certificate: a client one when hosts is empty, else a
// serving one for those DNS names and IP addresses.
func (c *ca) issue(cn string, orgs []string, hosts ...string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(hosts) > 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = ecKeyPEM(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, err
}

func ecKeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// identity is a client of the API server: its certificate's subject is
// its user name (CN) and groups (O).
type identity struct {
	file string // NAME.crt, NAME.key and NAME.kubeconfig in the pki folder
	cn   string
	orgs []string
}

var identities = []identity{
	{"admin", "job-signal-e2e-admin", []string{"system:masters"}},
	{"controller-manager", "system:kube-controller-manager", nil},
	{"scheduler", "system:kube-scheduler", nil},
	{"kubelet", "system:node:" + NodeName, []string{"system:nodes"}},
	// The API server's calls to the kubelet (logs, exec); the kubelet checks
	// it against the CA and allows what it asks.
	{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", nil},
}

// writePKI writes the CA, the API server's serving certificate, a client
// certificate and kubeconfig per identity, and the service-account key
// pair, into the pki folder.
func writePKI(p paths) (*ca, error) {
	dir := p.pki()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	authority, err := newCA("job-signal-e2e-ca")
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"ca.crt": authority.certPEM}
	cert, key, err := authority.issue("kube-apiserver", nil, "127.0.0.1", "localhost", firstService,
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
	if err != nil {
		return nil, err
	}
	files["apiserver.crt"], files["apiserver.key"] = cert, key
	for _, id := range identities {
		cert, key, err := authority.issue(id.cn, id.orgs)
		if err != nil {
			return nil, err
		}
		files[id.file+".crt"], files[id.file+".key"] = cert, key
		files[id.file+".kubeconfig"] = kubeconfig(authority.certPEM, cert, key)
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if files["sa.key"], err = ecKeyPEM(saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	files["sa.pub"] = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			return nil, err
		}
	}
	if err := writeAdmissionConfig(p); err != nil {
		return nil, err
	}
	// The admin's kubeconfig where a person looks for it (README).
	return authority, os.WriteFile(p.adminKubeconfig(), files["admin.kubeconfig"], 0o600)
}

// kubeconfig embeds everything, so the file works from any folder.
func kubeconfig(caPEM, certPEM, keyPEM []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: job-signal-e2e
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority-data: %s
users:
- name: job-signal-e2e
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: job-signal-e2e
  context: {cluster: job-signal-e2e, user: job-signal-e2e}
current-context: job-signal-e2e
`, apiserverPort, b64(caPEM), b64(certPEM), b64(keyPEM))
}
