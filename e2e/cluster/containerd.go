package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// containerdConfig is containerd 1.6's config (version 2) for the suite:
// its own socket, root and state, so it never meets a system containerd.
func containerdConfig(p paths) string {
	d := p.containerdDir()
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = %[3]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  # Required here: the machine lacks CAP_SYS_RESOURCE, and without this every
  # sandbox fails with "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[6]q
`, filepath.Join(d, "root"), filepath.Join(d, "state"), p.containerdSock(),
		filepath.Join(d, "opt"), PauseImage, p.cniConfDir())
}

// cniConfig is a bridge network that stays on this machine: the bridge is
// the Pods' gateway (podGateway: setUpNetwork gives it the address), but
// only for the one route to the kubernetes Service's address (the API
// server, through the DNAT of network.go); no default route, no masquerade.
// Addresses are leased in the suite's own folder.
func cniConfig(p paths) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "job-signal-e2e",
  "plugins": [{
    "type": "bridge",
    "bridge": %q,
    "isGateway": true,
    "isDefaultGateway": false,
    "ipMasq": false,
    "hairpinMode": false,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": %q, "gateway": %q}]],
      "routes": [{"dst": %q}],
      "dataDir": %q
    }
  }]
}
`, bridgeName, podSubnet, podGateway, firstService+"/32", p.cniDataDir())
}

// startContainerd writes its configuration and starts it, returning once
// it answers on its socket.
func startContainerd(p paths) (*daemon, error) {
	if err := mkdirs(p.containerdDir(), p.cniConfDir(), p.cniDataDir()); err != nil {
		return nil, err
	}
	cfg := filepath.Join(p.containerdDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte(containerdConfig(p)), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(p.cniConfDir(), "10-job-signal-e2e.conflist"), []byte(cniConfig(p)), 0o644); err != nil {
		return nil, err
	}
	d, err := startDaemon(p, "containerd", filepath.Join(p.logs, "containerd.log"), "containerd", "--config", cfg)
	if err != nil {
		return nil, err
	}
	err = poll(60*time.Second, 100*time.Millisecond, func() (bool, string, error) {
		if err := d.running(); err != nil {
			return false, "", err
		}
		_, err := ctr(p, "version")
		return err == nil, fmt.Sprint(err), nil
	})
	if err != nil {
		d.stop(10 * time.Second)
		return nil, fmt.Errorf("containerd did not come up: %w", err)
	}
	return d, nil
}

// ctr runs containerd's own client on the suite's socket, in the namespace
// the CRI plugin (and so the kubelet) uses.
func ctr(p paths, args ...string) (string, error) {
	return run(2*time.Minute, nil, append([]string{"ctr", "-a", p.containerdSock(), "-n", "k8s.io"}, args...)...)
}

// importImage loads an image archive (docker save or OCI layout) and
// checks that ref is then known.
func importImage(p paths, archive, ref string) error {
	if _, err := ctr(p, "images", "import", archive); err != nil {
		return err
	}
	out, err := ctr(p, "images", "ls", "-q")
	if err != nil {
		return err
	}
	for _, line := range strings.Fields(out) {
		if line == ref {
			return nil
		}
	}
	return fmt.Errorf("importing %s did not create %s; images now: %s", archive, ref, out)
}

// ImportCommand is a shell command importing an image archive, given as
// its last argument, into this cluster's containerd: Config.Load
// (E2E_LOAD) for a run that attaches to it.
func (c *Cluster) ImportCommand() string {
	return "ctr -a " + c.containerdSock() + " -n k8s.io images import"
}

// criCleanup stops and removes every Pod sandbox through the CRI: it kills
// what is left, and tears down each sandbox's network namespace and lease.
func criCleanup(p paths) error {
	_, err := run(2*time.Minute, nil, filepath.Join(p.bin, "e2etool"), "cri-cleanup", p.containerdSock())
	return err
}
