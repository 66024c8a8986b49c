//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// kubeletConfig is a standalone kubelet's configuration: no API server,
// Pods only from the static Pod folder, status readable without
// credentials on the read-only port (loopback only).
func kubeletConfig(p paths) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: %[1]q
# How often the folder is read; inotify usually notices a new file sooner.
fileCheckFrequency: 1s
containerRuntimeEndpoint: unix://%[2]s
imageServiceEndpoint: unix://%[2]s
cgroupDriver: cgroupfs
# Every Pod's cgroup lives below the suite's own cgroup.
cgroupRoot: %[3]s
# This machine has the cgroup v1 hierarchy; 1.34 still runs on it if asked.
failCgroupV1: false
failSwapOn: false
enforceNodeAllocatable: []
address: 127.0.0.1
port: %[4]d
readOnlyPort: %[5]d
healthzBindAddress: 127.0.0.1
healthzPort: %[6]d
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
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
`, p.manifests(), p.containerdSock(), p.cgroups+"/pods", kubeletPort, kubeletReadOnlyPort,
		kubeletHealthzPort, p.podLogs())
}

// startKubelet writes its configuration and starts it, returning once it
// serves Pods on its read-only port.
func startKubelet(p paths, bin string) (*daemon, error) {
	for _, port := range []int{kubeletPort, kubeletReadOnlyPort, kubeletHealthzPort} {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return nil, fmt.Errorf("port %d is taken (another kubelet?): %w", port, err)
		}
		l.Close()
	}
	for _, dir := range []string{p.kubeletRoot(), p.manifests(), p.podLogs()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	cfg := filepath.Join(p.kubeletRoot(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(kubeletConfig(p)), 0o644); err != nil {
		return nil, err
	}
	d, err := startDaemon(p, "kubelet", filepath.Join(p.logs, "kubelet.log"), bin,
		"--config", cfg, "--root-dir", p.kubeletRoot(), "--hostname-override", nodeName, "--v", "2")
	if err != nil {
		return nil, err
	}
	err = poll(120*time.Second, 200*time.Millisecond, func() (bool, string, error) {
		if err := d.running(); err != nil {
			return false, "", err
		}
		for _, url := range []string{
			fmt.Sprintf("http://127.0.0.1:%d/healthz", kubeletHealthzPort),
			fmt.Sprintf("http://127.0.0.1:%d/pods", kubeletReadOnlyPort),
		} {
			if _, err := httpGet(url); err != nil {
				return false, err.Error(), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		d.stop(15 * time.Second)
		return nil, fmt.Errorf("kubelet did not come up: %w\n%s", err, tailFile(d.log, 30))
	}
	return d, nil
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

func httpGet(url string) ([]byte, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return body, nil
}
