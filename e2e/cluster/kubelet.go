package cluster

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// kubeletConfig is the kubelet's configuration: registered with the API
// server as Node localhost, listening on 127.0.0.1 only, accepting the API
// server's client certificate (logs, exec) and nobody else's.
func kubeletConfig(p paths, f Features) string {
	var extra strings.Builder
	if f.FailCgroupV1Field {
		// This machine has the cgroup v1 hierarchy; from 1.35 the kubelet
		// runs on it only if asked.
		extra.WriteString("failCgroupV1: false\n")
	}
	if f.FeatureGates != "" {
		extra.WriteString("featureGates:\n")
		for _, gate := range strings.Split(f.FeatureGates, ",") {
			name, value, _ := strings.Cut(gate, "=")
			fmt.Fprintf(&extra, "  %s: %s\n", name, value)
		}
	}
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://%[1]s
imageServiceEndpoint: unix://%[1]s
cgroupDriver: cgroupfs
# Every Pod's cgroup lives below the suite's own cgroup.
cgroupRoot: %[2]s
failSwapOn: false
enforceNodeAllocatable: []
address: 127.0.0.1
port: %[3]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[4]d
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: %[5]q}
authorization:
  mode: AlwaysAllow
clusterDomain: cluster.local
clusterDNS: [%[6]s]
podLogsDir: %[7]q
# A test machine's disk and memory are whatever they are: never evict, never
# collect our locally imported images (they cannot be pulled back).
evictionHard:
  memory.available: 1Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`, p.containerdSock(), p.cgroups+"/pods", kubeletPort, kubeletHealthz,
		filepath.Join(p.pki(), "ca.crt"), clusterDNS, p.podLogs()) + extra.String()
}

// startKubelet writes its configuration and starts it, returning once its
// health endpoint answers (the Node's readiness is checked through the API).
func startKubelet(p paths, bin string, f Features) (*daemon, error) {
	if err := mkdirs(p.kubeletRoot(), p.podLogs()); err != nil {
		return nil, err
	}
	cfg := filepath.Join(p.kubeletRoot(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(kubeletConfig(p, f)), 0o644); err != nil {
		return nil, err
	}
	d, err := startDaemon(p, "kubelet", filepath.Join(p.logs, "kubelet.log"), filepath.Join(bin, "kubelet"),
		"--config="+cfg, "--root-dir="+p.kubeletRoot(),
		"--kubeconfig="+filepath.Join(p.pki(), "kubelet.kubeconfig"),
		"--hostname-override="+NodeName, "--v=2")
	if err != nil {
		return nil, err
	}
	client := &http.Client{Timeout: 5 * time.Second}
	if err := waitHTTP(d, 2*time.Minute, client, fmt.Sprintf("http://127.0.0.1:%d/healthz", kubeletHealthz)); err != nil {
		_ = d.stop(15 * time.Second)
		return nil, err
	}
	return d, nil
}
