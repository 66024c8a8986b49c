//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// The webhook as an operator runs it, minus the Deployment: the
// real job-signal-webhook binary as a process on 127.0.0.1, its serving
// certificate from the cluster's CA, reading Secrets as the shipped
// ServiceAccount with the shipped RBAC, and registered with the
// MutatingWebhookConfiguration, all as the Helm chart makes them
// (chart_test.go); the chart's url value makes the clientConfig a URL.

// webhookProcess is one running job-signal-webhook, stopped by its PID.
type webhookProcess struct {
	addr     string // 127.0.0.1:PORT
	cmd      *exec.Cmd
	logPath  string // its stderr: JSON lines
	ca       []byte // the CA of its serving certificate
	exited   chan struct{}
	stopOnce sync.Once
}

// webhookEvent is one of the webhook's log lines.
type webhookEvent struct {
	Msg       string      `json:"msg"`
	UID       string      `json:"uid"`
	Namespace string      `json:"namespace"`
	Pod       string      `json:"pod"`
	Job       string      `json:"job"`
	Reason    string      `json:"reason"`
	Addr      string      `json:"addr"`
	Metrics   string      `json:"metricsAddr"`
	Elapsed   logDuration `json:"elapsed"`
	// The form a Pod was given, and the cluster as checked.
	Form           string `json:"form"`
	Mode           string `json:"mode"`
	NativeSidecars *bool  `json:"nativeSidecars"`
	KubeVersion    string `json:"kubeVersion"`
	// A Node that holds native sidecars back, or no longer does.
	Node           string `json:"node"`
	KubeletVersion string `json:"kubeletVersion"`
}

// logDuration is a duration in a log line, written as Go writes it
// ("1.5ms"): every job-signal program's logger writes durations so.
type logDuration time.Duration

func (d *logDuration) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		return fmt.Errorf("a duration in a log line: %w", err)
	}
	v, err := time.ParseDuration(text)
	*d = logDuration(v)
	return err
}

// startWebhook runs job-signal-webhook with a fresh certificate for
// 127.0.0.1, a kubeconfig of the shipped ServiceAccount, debug logs in
// JSON and flags (a --listen among them replaces the default, a free
// port); it returns once the webhook has said where it listens. Its mode
// is pair unless flags give --mode: the tests that assert job-signal's
// pair ask for it, where the shipped auto would give native sidecars on a
// cluster that has them. In modes auto and native it reads the Nodes,
// as the shipped ClusterRole lets it.
func startWebhook(t *testing.T, flags ...string) *webhookProcess {
	t.Helper()
	return startWebhookBinary(t, filepath.Join(workBin(), "job-signal-webhook"), nil, flags...)
}

// startWebhookBinary is startWebhook with another build of the webhook
// and more environment.
func startWebhookBinary(t *testing.T, bin string, env []string, flags ...string) *webhookProcess {
	t.Helper()
	requireLoopback(t, "the API server calls the webhook this test serves on 127.0.0.1")
	certPEM, keyPEM, err := kube.IssueServingCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return startWebhookServing(t, bin, env, servingCert{cert: certPEM, key: keyPEM, ca: kube.CAPEM()}, flags...)
}

// servingCert is a serving certificate and key, and the CA that signs it
// (PEM).
type servingCert struct{ cert, key, ca []byte }

// startWebhookServing is startWebhookBinary with a serving certificate of
// the test's.
func startWebhookServing(t *testing.T, bin string, env []string, serving servingCert, flags ...string) *webhookProcess {
	t.Helper()
	requireLoopback(t, "the API server calls the webhook this test serves on 127.0.0.1")
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(cert, serving.cert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, serving.key, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--listen=127.0.0.1:0", "--tls-cert-file=" + cert, "--tls-key-file=" + key,
		"--kubeconfig=" + webhookKubeconfig(t, dir), "--log-format=json", "--log-level=debug",
		"--mode=pair", "--namespace=" + chartNamespace}, flags...)
	return runWebhook(t, bin, env, serving.ca, args...)
}

// runWebhook runs bin with exactly args (JSON logs among them) and more
// environment, stopped by its PID when the test ends; it returns once the
// webhook has said where it listens. ca is the CA of its serving
// certificate, for the test to reach it.
func runWebhook(t *testing.T, bin string, env []string, ca []byte, args ...string) *webhookProcess {
	t.Helper()
	dir := t.TempDir()
	w := &webhookProcess{logPath: filepath.Join(dir, "webhook.log"), ca: ca, exited: make(chan struct{})}
	logFile, err := os.Create(w.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close() // the child has its own copy
	w.cmd = exec.Command(bin, args...)
	w.cmd.Env = append(os.Environ(), env...)
	w.cmd.Stdout, w.cmd.Stderr = logFile, logFile
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		w.cmd.Wait()
		close(w.exited)
	}()
	t.Cleanup(func() {
		w.stop(t)
		if t.Failed() {
			log, _ := os.ReadFile(w.logPath)
			t.Logf("job-signal-webhook's log:\n%s", log)
		}
	})
	w.addr = w.waitEvent(t, time.Minute, func(e webhookEvent) bool { return e.Msg == "serving" && e.Addr != "" }).Addr
	return w
}

// stop sends SIGTERM to the webhook's PID, and SIGKILL after 10 s.
func (w *webhookProcess) stop(t *testing.T) {
	w.stopOnce.Do(func() {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.exited:
		case <-time.After(10 * time.Second):
			t.Errorf("job-signal-webhook ignored SIGTERM for 10 s: killed")
			_ = w.cmd.Process.Kill()
			<-w.exited
		}
	})
}

// waitEvent waits, up to timeout, for a log line that match accepts, and
// returns it.
func (w *webhookProcess) waitEvent(t *testing.T, timeout time.Duration, match func(webhookEvent) bool) webhookEvent {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, e := range w.events(t) {
			if match(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job-signal-webhook did not log the line awaited within %s", timeout)
		}
		select {
		case <-w.exited:
			t.Fatalf("job-signal-webhook exited (%v)", w.cmd.ProcessState)
		case <-time.After(50 * time.Millisecond): // a log file has no watch here: poll it, bounded
		}
	}
}

// events are the webhook's log lines so far.
func (w *webhookProcess) events(t *testing.T) []webhookEvent {
	t.Helper()
	b, err := os.ReadFile(w.logPath)
	if err != nil {
		t.Fatal(err)
	}
	var out []webhookEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e webhookEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// shippedWebhook holds the webhook's objects as the chart makes them
// (renderChart), and the Namespace helm install --create-namespace makes.
type shippedWebhook struct {
	namespace      *corev1.Namespace
	serviceAccount *corev1.ServiceAccount
	roles          []*rbacv1.ClusterRole
	bindings       []*rbacv1.ClusterRoleBinding
	config         *admissionregistrationv1.MutatingWebhookConfiguration
}

func readShippedWebhook(t *testing.T) shippedWebhook {
	t.Helper()
	file, objects := renderChart(t)
	s := shippedWebhook{namespace: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNamespace}}}
	for _, obj := range objects {
		if m, ok := obj.(metav1.Object); ok && m.GetAnnotations()["helm.sh/hook"] != "" {
			continue // the uninstall hook's account and rights, not the webhook's
		}
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			s.serviceAccount = o
		case *rbacv1.ClusterRole:
			s.roles = append(s.roles, o)
		case *rbacv1.ClusterRoleBinding:
			s.bindings = append(s.bindings, o)
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			s.config = o
		}
	}
	if s.namespace == nil || s.serviceAccount == nil || len(s.roles) == 0 || len(s.bindings) == 0 || s.config == nil {
		t.Fatalf("%s lacks one of Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding, MutatingWebhookConfiguration", file)
	}
	return s
}

var webhookRBAC struct {
	once sync.Once
	err  error
}

// webhookKubeconfig creates, once, the shipped Namespace, ServiceAccount,
// ClusterRoles and ClusterRoleBinding, and writes a kubeconfig with a
// token of that ServiceAccount: the webhook reads LimitRanges and Nodes,
// and pull secrets where enableNamespace let it, with exactly the rights
// the manifests give it.
func webhookKubeconfig(t *testing.T, dir string) string {
	t.Helper()
	s := readShippedWebhook(t)
	client := kube.Client()
	ctx := t.Context()
	webhookRBAC.once.Do(func() {
		create := func(err error) {
			if err != nil && !apierrors.IsAlreadyExists(err) && webhookRBAC.err == nil {
				webhookRBAC.err = err
			}
		}
		_, err := client.CoreV1().Namespaces().Create(ctx, s.namespace, metav1.CreateOptions{})
		create(err)
		_, err = client.CoreV1().ServiceAccounts(s.serviceAccount.Namespace).Create(ctx, s.serviceAccount, metav1.CreateOptions{})
		create(err)
		for _, role := range s.roles {
			_, err = client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
			create(err)
		}
		for _, binding := range s.bindings {
			_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
			create(err)
		}
	})
	if webhookRBAC.err != nil {
		t.Fatalf("creating the webhook's RBAC from the chart: %v", webhookRBAC.err)
	}
	return accountKubeconfig(t, dir, s.serviceAccount.Namespace, s.serviceAccount.Name)
}

// accountKubeconfig writes, in dir, a kubeconfig for the cluster with a
// token of ServiceAccount namespace/account, valid for an hour.
func accountKubeconfig(t *testing.T, dir, namespace, account string) string {
	t.Helper()
	token, err := kube.Client().CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), account,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for ServiceAccount %s/%s: %v", namespace, account, err)
	}
	// The API server as the admin's kubeconfig names and trusts it: the
	// suite's own, or, attached, the user's.
	rc := kube.RESTConfig()
	server := &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthority: rc.CAFile, CertificateAuthorityData: rc.CAData,
		TLSServerName: rc.ServerName, InsecureSkipTLSVerify: rc.Insecure}
	path := filepath.Join(dir, "kubeconfig")
	err = clientcmd.WriteToFile(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"e2e": server},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"job-signal-webhook": {Token: token.Status.Token}},
		Contexts:       map[string]*clientcmdapi.Context{"e2e": {Cluster: "e2e", AuthInfo: "job-signal-webhook"}},
		CurrentContext: "e2e",
	}, path)
	if err != nil {
		t.Fatal(err)
	}
	return path
}
