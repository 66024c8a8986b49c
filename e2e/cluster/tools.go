package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Kubectl runs the cluster's kubectl (built from the same pinned module)
// as cluster-admin, and returns its standard output; the error carries
// its standard error.
func (c *Cluster) Kubectl(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, "kubectl"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig())
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// Report is what a person would look at when a test in namespace ns fails:
// kubectl describe of its Jobs, CronJobs and Pods, its events in order,
// and every container's log (the previous run's too, after a restart).
func (c *Cluster) Report(ctx context.Context, ns string) string {
	var b strings.Builder
	section := func(title string, args ...string) {
		out, err := c.Kubectl(ctx, "", args...)
		fmt.Fprintf(&b, "----- %s\n%s", title, out)
		if err != nil {
			fmt.Fprintf(&b, "(%v)\n", err)
		}
	}
	section("kubectl describe jobs,cronjobs -n "+ns, "describe", "jobs,cronjobs", "-n", ns)
	section("kubectl describe pods -n "+ns, "describe", "pods", "-n", ns)
	section("kubectl get events -n "+ns, "get", "events", "-n", ns, "--sort-by=.metadata.creationTimestamp",
		"-o", "custom-columns=TIME:.metadata.creationTimestamp,TYPE:.type,REASON:.reason,OBJECT:.involvedObject.name,MESSAGE:.message")
	pods, _ := c.Kubectl(ctx, "", "get", "pods", "-n", ns, "-o", "jsonpath={range .items[*]}{.metadata.name} {end}")
	for _, pod := range strings.Fields(pods) {
		section("kubectl logs "+pod, "logs", "-n", ns, pod, "--all-containers", "--prefix", "--timestamps")
		if out, err := c.Kubectl(ctx, "", "logs", "-n", ns, pod, "--all-containers", "--prefix", "--previous"); err == nil && out != "" {
			fmt.Fprintf(&b, "----- kubectl logs --previous %s\n%s", pod, out)
		}
	}
	return b.String()
}

// CRIContainer is the runtime's record of a container, with nanosecond
// times (the API's are rounded to seconds).
type CRIContainer struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	PodUID     string `json:"podUID"`
	State      string `json:"state"`
	ExitCode   int32  `json:"exitCode"`
	StartedAt  int64  `json:"startedAt"`  // Unix nanoseconds
	FinishedAt int64  `json:"finishedAt"` // Unix nanoseconds; 0 while running
	// SandboxCreatedAt: the runtime created the Pod's sandbox, its start
	// on the node (Unix nanoseconds; 0 if it was removed meanwhile).
	SandboxCreatedAt int64 `json:"sandboxCreatedAt"`
}

// CRIContainers lists the runtime's containers of a Pod (by UID).
func (c *Cluster) CRIContainers(ctx context.Context, podUID string) ([]CRIContainer, error) {
	if !c.feat.NodeProcesses {
		return nil, errNoPower("CRIContainers", "NodeProcesses")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, "e2etool"), "cri-containers", c.containerdSock())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("e2etool cri-containers: %w: %s", err, stderr.String())
	}
	var all, mine []CRIContainer
	if err := json.Unmarshal(out, &all); err != nil {
		return nil, err
	}
	for _, ct := range all {
		if ct.PodUID == podUID {
			mine = append(mine, ct)
		}
	}
	return mine, nil
}

// CAPEM is the cluster's CA certificate: the API server's serving
// certificate chains to it, and so do those from IssueServingCert (use it
// as a webhook's caBundle). None on an attached cluster (Powers.Loopback).
func (c *Cluster) CAPEM() []byte {
	if c.ca == nil {
		return nil
	}
	return append([]byte(nil), c.ca.certPEM...)
}

// IssueServingCert signs a serving certificate for the given DNS names and
// IP addresses (for a webhook: "127.0.0.1") with the cluster's CA.
func (c *Cluster) IssueServingCert(hosts ...string) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, fmt.Errorf("IssueServingCert: name at least one host")
	}
	if c.ca == nil {
		return nil, nil, errNoPower("IssueServingCert", "Loopback")
	}
	return c.ca.issue(hosts[0], nil, hosts...)
}

// errNoPower is what a method that needs one of the Powers returns on an
// attached cluster.
func errNoPower(method, power string) error {
	return fmt.Errorf("%s: not on a cluster the suite attached to (Features().%s is false)", method, power)
}

// LoadImage writes img as an archive and gets it to the nodes (imported
// into the built cluster's containerd); Pods name it ImageRef(img.Ref),
// with PullPolicy.
func (c *Cluster) LoadImage(img Image) error {
	file, err := writeImage(c.paths, img)
	if err != nil {
		return err
	}
	return c.deliver(file, img.Ref)
}

// BuildahBuild builds a Dockerfile's target with buildah, offline, and
// gets it to the nodes as ref, as LoadImage does.
func (c *Cluster) BuildahBuild(dockerfile, target, contextDir, ref string) error {
	root := c.buildahDir()
	if c.attached {
		root = filepath.Join(c.work, "buildah") // the built cluster's folder may be in use
	}
	archive, err := buildahBuild(c.paths, root, c.attached, dockerfile, target, contextDir, ref)
	if err != nil {
		return err
	}
	return c.deliver(archive, ref)
}

// TagImage gives an imported image a second name, e.g. the release
// reference that manifests and webhooks name, so that a Pod with
// imagePullPolicy IfNotPresent runs the local image (Powers.LocalImages).
func (c *Cluster) TagImage(src, dst string) error {
	if !c.feat.LocalImages {
		return errNoPower("TagImage", "LocalImages")
	}
	_, err := ctr(c.paths, "images", "tag", "--force", src, dst)
	return err
}
