//go:build e2e

package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// The webhook called as the API server calls it in a cluster, for the
// tests that measure it. The API server calls a webhook behind a Service
// over HTTP/1.1, through a pool that keeps at most 25 idle connections
// (client-go's transport), and so does it for a webhook registered by a
// URL, unless the URL's host is a loopback address or "localhost": those
// it calls with HTTP/2, one connection for every request
// (k8s.io/apiserver/pkg/util/webhook, client.go, on 1.30 as on 1.37). A
// webhook registered as https://127.0.0.1:PORT is therefore called as in
// no cluster; registered as https://localhost.:PORT (the same address,
// named as no rule of the API server's knows it) it is called as behind a
// Service. Its serving certificate is what the chart generates (Helm's
// genCA and genSignedCert: RSA 2048, as cert-manager's default too), not
// the suite's ECDSA one: each TLS handshake the API server opens costs
// the webhook one signature with that key.

// serviceLikeHost is the name the API server calls the webhook by.
const serviceLikeHost = "localhost."

// shippedServingCert is a CA and a serving certificate for serviceLikeHost
// and 127.0.0.1, both RSA 2048 as the chart generates them.
func shippedServingCert(t *testing.T) servingCert {
	t.Helper()
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	serial := func() *big.Int {
		n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
		return n
	}
	caTmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "job-signal-webhook CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, BasicConstraintsValid: true, IsCA: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "job-signal-webhook.job-signal-system.svc"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "job-signal-webhook.job-signal-system.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return servingCert{
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		ca:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
	}
}

// freeLoopbackPort is a port on 127.0.0.1 free now, for a webhook that is
// started again on the same address.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// registerLikeService registers the chart's configuration for the
// webhook on 127.0.0.1:port under serviceLikeHost, with the CA of its
// certificate, for namespaces; a webhook must be serving there.
func registerLikeService(t *testing.T, port int, caPEM []byte, namespaces ...string) {
	t.Helper()
	registerWebhookAt(t, fmt.Sprintf("https://%s:%d/mutate", serviceLikeHost, port), caPEM, "", namespaces...)
}

// jobPodLike is a Pod as the Job controller creates it from a template an
// application's chart would write: the controller's labels, owner and
// finalizer, the chart's labels and annotations; a main container with
// its environment, resources, mounts and security context, and a proxy
// sidecar with flags, a port and a readiness probe, every command given.
// The API server adds its defaults, the ServiceAccount's token volume and
// tolerations before the webhook sees it.
func jobPodLike(name string) *corev1.Pod {
	uid := types.UID("3f0c6a52-7d1e-4b8a-9c1e-5a2b7d9e0f14")
	env := []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "DATABASE_HOST", Value: "127.0.0.1"}, {Name: "DATABASE_PORT", Value: "5432"}, {Name: "DATABASE_NAME", Value: "orders"},
		{Name: "EXPORT_BUCKET", Value: "gs://example-exports/daily"}, {Name: "LOG_LEVEL", Value: "info"}, {Name: "LOG_FORMAT", Value: "json"},
		{Name: "GOMAXPROCS", Value: "2"}, {Name: "BATCH_SIZE", Value: "500"},
	}
	resources := func(cpu, memory string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)},
		}
	}
	restricted := &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"batch.kubernetes.io/controller-uid": string(uid), "batch.kubernetes.io/job-name": "orders-export-29211840",
				"controller-uid": string(uid), "job-name": "orders-export-29211840", "app.kubernetes.io/name": "orders-export",
				"app.kubernetes.io/instance": "orders", "app.kubernetes.io/component": "export", "app.kubernetes.io/part-of": "orders",
				"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "orders-1.14.2"},
			Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "export",
				"checksum/config": "9c1e5a2b7d9e0f143f0c6a527d1e4b8a9c1e5a2b7d9e0f143f0c6a527d1e4b8a"},
			Finalizers: []string{"batch.kubernetes.io/job-tracking"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "orders-export-29211840", UID: uid,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To(int64(30)),
			SecurityContext:               &corev1.PodSecurityContext{FSGroup: ptr.To(int64(2000)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{
				{Name: "export", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"sh", "-c", shortMain},
					Args: []string{"--since=24h", "--format=parquet"}, WorkingDir: "/work", Env: env, Resources: resources("250m", "512Mi"),
					VolumeMounts:    []corev1.VolumeMount{{Name: "work", MountPath: "/work"}, {Name: "config", MountPath: "/etc/orders", ReadOnly: true}},
					SecurityContext: restricted},
				{Name: "db-proxy", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"sh", "-c", termSidecar},
					Args:  []string{"--port=5432", "--address=127.0.0.1", "--structured-logs", "--max-connections=16", "example:europe-west1:orders"},
					Ports: []corev1.ContainerPort{{Name: "postgres", ContainerPort: 5432}}, Resources: resources("50m", "64Mi"),
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(5432)}},
						PeriodSeconds: 2, FailureThreshold: 30},
					SecurityContext: restricted},
			},
			Volumes: []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "orders-export"}}}}},
		},
	}
}

// bodyBounds are the upper bounds of job_signal_webhook_request_body_seconds.
var bodyBounds = []string{"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2", "+Inf"}

// bodyTimes is the webhook's histogram of the time from a request's
// headers to its body's end: the cumulative count under each bound.
func (w *webhookProcess) bodyTimes(t *testing.T) []float64 {
	t.Helper()
	var counts []float64
	for _, le := range bodyBounds {
		counts = append(counts, w.metric(t, `job_signal_webhook_request_body_seconds_bucket{le="`+le+`"}`))
	}
	return counts
}

// slowestBody is the least bound under which every body counted between
// before and after came, and how many there were.
func slowestBody(before, after []float64) (string, int) {
	total := after[len(after)-1] - before[len(before)-1]
	for i, le := range bodyBounds {
		if after[i]-before[i] == total {
			return le, int(total)
		}
	}
	return "+Inf", int(total)
}

func boundIndex(le string) int { return slices.Index(bodyBounds, le) }
