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
	bin := p.cache + "/k8s-v1.37.2-etcd-v3.7.0/"
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

// TestPinnedVersions reads the modules below e2e/kubernetes/ as pin.sh
// writes them (after go mod tidy: both requirements indirect).
func TestPinnedVersions(t *testing.T) {
	repo := t.TempDir()
	write := func(minor, text string) {
		dir := filepath.Join(kubernetesDir(repo), minor)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pinnedVersions(repo); err == nil || !strings.Contains(err.Error(), "no Kubernetes version is pinned") {
		t.Fatalf("no module: want an error saying none is pinned, got %v", err)
	}
	write("v1.37", "module x\n\nrequire (\n\tgo.etcd.io/etcd/server/v3 v3.7.0 // indirect\n\tk8s.io/kubernetes v1.37.2 // indirect\n)\n")
	write("v1.30", "module y\n\nrequire (\n\tgo.etcd.io/etcd/server/v3 v3.5.10 // indirect\n\tk8s.io/kubernetes v1.30.14 // indirect\n)\n")
	got, err := pinnedVersions(repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Kube != "v1.30.14" || got[0].Etcd != "v3.5.10" || got[1].Kube != "v1.37.2" || got[1].Etcd != "v3.7.0" || got[1].Minor() != 37 {
		t.Fatalf("pinnedVersions = %+v; want v1.30.14/v3.5.10 then v1.37.2/v3.7.0", got)
	}
	if got[1].Module != filepath.Join(kubernetesDir(repo), "v1.37") {
		t.Errorf("module folder %s", got[1].Module)
	}
	write("v1.38", "module z\n\nrequire k8s.io/kubernetes v1.38.0\n")
	if _, err := pinnedVersions(repo); err == nil || !strings.Contains(err.Error(), "go.etcd.io/etcd/server/v3") {
		t.Fatalf("want an error naming the missing etcd requirement, got %v", err)
	}
}

func TestChooseVersion(t *testing.T) {
	pinned := []Version{{Kube: "v1.30.14", minor: 30, patch: 14}, {Kube: "v1.37.2", minor: 37, patch: 2}}
	for _, tc := range []struct{ want, got, err string }{
		{"", "v1.37.2", ""}, // the newest
		{"v1.30.14", "v1.30.14", ""},
		{"1.30.14", "v1.30.14", ""},
		{"v1.30", "v1.30.14", ""},
		{"1.37", "v1.37.2", ""},
		{"v1.30.13", "", "not pinned (pinned: v1.30.14, v1.37.2)"},
		{"v1.3", "", "not pinned"},
		{"latest", "", "not pinned"},
	} {
		v, err := chooseVersion(pinned, tc.want)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("chooseVersion(%q) = %v, %v; want an error containing %q", tc.want, v, err, tc.err)
			}
			continue
		}
		if err != nil || v.Kube != tc.got {
			t.Errorf("chooseVersion(%q) = %v, %v; want %s", tc.want, v, err, tc.got)
		}
	}
}

func TestFeaturesOf(t *testing.T) {
	for _, tc := range []struct {
		minor int
		want  Features
	}{
		{30, Features{NativeSidecars: false, FeatureGates: "SidecarContainers=false"}},
		{32, Features{NativeSidecars: false, FeatureGates: "SidecarContainers=false", FailCgroupV1Field: true, JobVerdictFirst: true}},
		{33, Features{NativeSidecars: true, FailCgroupV1Field: true, JobVerdictFirst: true}},
		{37, Features{NativeSidecars: true, FailCgroupV1Field: true, JobVerdictFirst: true}},
	} {
		if got := featuresOf(tc.minor); got != tc.want {
			t.Errorf("featuresOf(%d) = %+v, want %+v", tc.minor, got, tc.want)
		}
	}
}

// TestKubeletConfig: the 1.30 kubelet rejects failCgroupV1, later ones
// need it on this machine; the feature gates go into the configuration.
func TestKubeletConfig(t *testing.T) {
	p := paths{base: "/var/lib/job-signal-e2e", cgroups: "/job-signal-e2e"}
	old := kubeletConfig(p, featuresOf(30))
	if strings.Contains(old, "failCgroupV1") || !strings.Contains(old, "featureGates:\n  SidecarContainers: false\n") {
		t.Errorf("1.30's configuration:\n%s", old)
	}
	now := kubeletConfig(p, featuresOf(37))
	if !strings.Contains(now, "failCgroupV1: false\n") || strings.Contains(now, "featureGates") {
		t.Errorf("1.37's configuration:\n%s", now)
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
