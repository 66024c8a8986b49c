package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// The parts of the harness that need no root: run by make test.

func TestOurs(t *testing.T) {
	p := paths{base: "/var/lib/job-signal-e2e", cache: "/root/.cache/job-signal-e2e"}
	bin := p.cache + "/k8s-v1.34.4-etcd-v3.6.4/"
	for _, tc := range []struct {
		cmdline string
		want    bool
	}{
		{"containerd --config /var/lib/job-signal-e2e/containerd/config.toml", true},
		{"/usr/bin/containerd-shim-runc-v2 -namespace k8s.io -id abc -address /var/lib/job-signal-e2e/containerd/containerd.sock", true},
		{bin + "etcd --name=e2e --data-dir=/var/lib/job-signal-e2e/etcd", true},
		{bin + "kubelet --config=/var/lib/job-signal-e2e/kubelet/config.yaml", true},
		// Someone else's etcd, or a person reading our logs, is not ours.
		{"/usr/bin/etcd --data-dir=/var/lib/etcd", false},
		{"tail -f /var/lib/job-signal-e2e/pod-logs/x.log", false},
		{bin + "kubectl version", false},
		{"containerd --config /etc/containerd/config.toml", false},
	} {
		if got := p.ours(tc.cmdline); got != tc.want {
			t.Errorf("ours(%q) = %v, want %v", tc.cmdline, got, tc.want)
		}
	}
}

func TestVersions(t *testing.T) {
	repo := t.TempDir()
	dir := filepath.Join(repo, "e2e", "kubelet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("module x\n\nrequire (\n\tgo.etcd.io/etcd/server/v3 v3.6.4 // indirect\n\tk8s.io/kubernetes v1.34.4 // indirect\n)\n")
	kube, etcd, err := versions(paths{repo: repo})
	if err != nil || kube != "v1.34.4" || etcd != "v3.6.4" {
		t.Fatalf("versions = %q, %q, %v; want v1.34.4, v3.6.4", kube, etcd, err)
	}
	write("module x\n\nrequire k8s.io/kubernetes v1.34.4\n")
	if _, _, err := versions(paths{repo: repo}); err == nil || !strings.Contains(err.Error(), "go.etcd.io/etcd/server/v3") {
		t.Fatalf("want an error naming the missing etcd requirement, got %v", err)
	}
}

// TestPKI: the API server's certificate serves its names, a webhook's from
// IssueServingCert verifies against CAPEM (its caBundle), and the admin's
// kubeconfig carries a client certificate of group system:masters.
func TestPKI(t *testing.T) {
	p := paths{base: t.TempDir()}
	authority, err := writePKI(p)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{paths: p, ca: authority}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(c.CAPEM()) {
		t.Fatal("CAPEM is not a PEM certificate")
	}
	verify := func(certPEM, keyPEM []byte, host string, usage x509.ExtKeyUsage) *x509.Certificate {
		t.Helper()
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Errorf("%s for %q: %v", leaf.Subject.CommonName, host, err)
		}
		return leaf
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(p.pki(), name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, host := range []string{"127.0.0.1", "localhost", "kubernetes.default.svc", firstService} {
		verify(read("apiserver.crt"), read("apiserver.key"), host, x509.ExtKeyUsageServerAuth)
	}
	cert, key, err := c.IssueServingCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	verify(cert, key, "127.0.0.1", x509.ExtKeyUsageServerAuth)

	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	admin := verify(cfg.CertData, cfg.KeyData, "", x509.ExtKeyUsageClientAuth)
	if got := admin.Subject.Organization; len(got) != 1 || got[0] != "system:masters" {
		t.Errorf("admin's groups = %v, want [system:masters]", got)
	}
	if !strings.HasSuffix(cfg.Host, ":16443") {
		t.Errorf("admin kubeconfig's server = %s, want the API server's port 16443", cfg.Host)
	}
}
