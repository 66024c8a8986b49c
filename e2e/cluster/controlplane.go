package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// startEtcd starts a one-member etcd on plain http, on 127.0.0.1 only.
func startEtcd(p paths, bin string) (*daemon, error) {
	client := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", etcdPeerPort)
	d, err := startDaemon(p, "etcd", filepath.Join(p.logs, "etcd.log"), filepath.Join(bin, "etcd"),
		"--name=e2e", "--data-dir="+p.etcdDir(),
		"--listen-client-urls="+client, "--advertise-client-urls="+client,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=e2e="+peer,
		// A test cluster's data need not survive a crash of the machine, and
		// fsync on a shared disk makes every API write slow.
		"--unsafe-no-fsync", "--log-level=warn")
	if err != nil {
		return nil, err
	}
	return d, waitHTTP(d, 60*time.Second, http.DefaultClient, client+"/health")
}

// startAPIServer starts kube-apiserver on 127.0.0.1 with the suite's
// certificates. Every default admission plugin stays on, including
// MutatingAdmissionWebhook (the webhook runs against this cluster).
func startAPIServer(p paths, bin string, f Features) (*daemon, error) {
	pki := p.pki()
	args := withGates(f,
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdPort),
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", apiserverPort),
		// The kubernetes Service's endpoints cannot be a loopback address:
		// nothing in the cluster needs them, so nothing writes them.
		"--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none",
		"--service-cluster-ip-range="+serviceSubnet,
		"--cert-dir="+filepath.Join(p.base, "apiserver"),
		"--tls-cert-file="+filepath.Join(pki, "apiserver.crt"),
		"--tls-private-key-file="+filepath.Join(pki, "apiserver.key"),
		"--client-ca-file="+filepath.Join(pki, "ca.crt"),
		"--kubelet-client-certificate="+filepath.Join(pki, "apiserver-kubelet-client.crt"),
		"--kubelet-client-key="+filepath.Join(pki, "apiserver-kubelet-client.key"),
		// The Node's InternalIP is this machine's address, where the kubelet
		// does not listen: reach it by its name, localhost, for logs and exec.
		"--kubelet-preferred-address-types=Hostname,InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(pki, "sa.key"),
		"--authorization-mode=Node,RBAC",
		// A webhook registered by Service is called at one of the Service's
		// endpoints, a Pod IP (which this machine reaches: network.go), not at
		// its ClusterIP, which nothing routes here (no kube-proxy).
		"--enable-aggregator-routing=true",
		// Webhooks are called as without it, but for the one address its
		// kubeconfig names (WebhookClientAddr): there the API server
		// presents a client certificate.
		"--admission-control-config-file="+p.admissionConfig(),
		"--allow-privileged=true",
		"--profiling=false",
	)
	return startDaemon(p, "kube-apiserver", filepath.Join(p.logs, "kube-apiserver.log"), append([]string{filepath.Join(bin, "kube-apiserver")}, args...)...)
}

// withGates adds the version's feature gates to a component's flags.
func withGates(f Features, args ...string) []string {
	if f.FeatureGates != "" {
		args = append(args, "--feature-gates="+f.FeatureGates)
	}
	return args
}

// startController starts the controller manager or the scheduler: both
// talk to the API server as the identity of their kubeconfig (also for
// checking who calls their /healthz), serve on 127.0.0.1 with a
// certificate they sign themselves, and run alone (no leader election).
func startController(p paths, bin string, f Features, name, identity string, port int, extra ...string) (*daemon, error) {
	kc := filepath.Join(p.pki(), identity+".kubeconfig")
	args := append([]string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + filepath.Join(p.base, identity),
		"--leader-elect=false", "--profiling=false",
	}, extra...)
	return startDaemon(p, name, filepath.Join(p.logs, name+".log"), append([]string{filepath.Join(bin, name)}, withGates(f, args...)...)...)
}

// startControllerManager starts the controllers (the Job, CronJob, TTL,
// garbage collector, namespace and service-account ones among them).
func startControllerManager(p paths, bin string, f Features) (*daemon, error) {
	return startController(p, bin, f, "kube-controller-manager", "controller-manager", controllerMgrPort,
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+filepath.Join(p.pki(), "sa.key"),
		"--root-ca-file="+filepath.Join(p.pki(), "ca.crt"),
		"--allocate-node-cidrs=false",
		"--service-cluster-ip-range="+serviceSubnet,
	)
}

// startScheduler starts the scheduler, which binds every Pod to the Node.
func startScheduler(p paths, bin string, f Features) (*daemon, error) {
	return startController(p, bin, f, "kube-scheduler", "scheduler", schedulerPort)
}

// selfSigned reaches the controller manager's and the scheduler's /healthz:
// they serve it with certificates they sign themselves, on 127.0.0.1.
var selfSigned = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
}

// waitHTTP polls url until it answers 200, d exits, or timeout passes.
func waitHTTP(d *daemon, timeout time.Duration, client *http.Client, url string) error {
	err := poll(timeout, 100*time.Millisecond, func() (bool, string, error) {
		if err := d.running(); err != nil {
			return false, "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			return false, err.Error(), nil
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Sprintf("%s: %s", resp.Status, body), nil
	})
	if err != nil {
		return fmt.Errorf("%s did not become healthy at %s: %w\n%s", d.name, url, err, tailFile(d.log, 30))
	}
	return nil
}

// mkdirs creates folders a daemon expects.
func mkdirs(dirs ...string) error {
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return nil
}
