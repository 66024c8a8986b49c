package kubectl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/job-signal/job-signal/inject"

	"github.com/job-signal/job-signal/internal/testing/hostileregistry"
)

// jobOf is a Job whose template has these containers (YAML flow
// mappings, one a line) and template annotations (a flow mapping, or "").
func jobOf(annotations string, containers ...string) string {
	doc := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n"
	if annotations != "" {
		doc += "    metadata: {annotations: " + annotations + "}\n"
	}
	doc += "    spec:\n      restartPolicy: Never\n      containers:\n"
	for _, c := range containers {
		doc += "      - " + c + "\n"
	}
	return doc
}

// TestRegistryErrorIsOneLine: a registry that answers with a proxy's huge
// HTML error page (or plays any other trick) does not put what it sends
// into the plugin's error: what comes from outside is one bounded line
// (as the webhook's reasons are).
func TestRegistryErrorIsOneLine(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	reg := hostileregistry.Start(t)
	for _, trick := range hostileregistry.Tricks {
		in := jobOf("", "{name: app, image: "+reg.Image(trick)+"}", "{name: proxy, image: cloud-sql-proxy, command: [/proxy]}")
		var out, stderr bytes.Buffer
		code := Main(context.Background(), []string{"inject", "--registry-timeout", "3s", "-f", "-"}, strings.NewReader(in), &out, &stderr)
		if code != 1 || out.Len() > 0 {
			t.Errorf("%s: exit %d, %d bytes out, stderr %q", trick, code, out.Len(), stderr.String())
			continue
		}
		msg := strings.TrimSuffix(stderr.String(), "\n")
		if strings.Contains(msg, "\n") || len(msg) > 1536 {
			t.Errorf("%s: %d bytes, %d lines on stderr:\n%.2000s", trick, len(msg), strings.Count(msg, "\n")+1, msg)
		}
		for _, want := range []string{`container "app"`, "ENTRYPOINT could not be looked up", "trick/" + string(trick)} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: stderr lacks %q: %.2000s", trick, want, msg)
			}
		}
	}
}

// TestAnnotationsOverTheLimit: a template whose annotations job-signal's
// record would take over the API server's 256 KiB is refused, by the
// webhook's rule, rather than written for kubectl apply to fail on; one
// that fits with the record is injected.
func TestAnnotationsOverTheLimit(t *testing.T) {
	containers := []string{"{name: app, image: i, command: [/app]}", "{name: proxy, image: cloud-sql-proxy, command: [/proxy]}"}
	big := func(n int) string { return "{example.com/big: " + strings.Repeat("x", n) + "}" }
	_, _, err := run(t, jobOf(big(256<<10-len("example.com/big")-200), containers...), true)
	if err == nil || !strings.Contains(err.Error(), "over the API server's limit of 262144") || !strings.Contains(err.Error(), "Job j, spec.template") {
		t.Errorf("error %v", err)
	}
	out, _, err := run(t, jobOf(big(200<<10), containers...), true)
	if err != nil || !strings.Contains(out, "job-signal.dev/injected") {
		t.Errorf("error %v", err)
	}
}

// apiServer answers the LimitRanges of namespaces as an API server does
// (LimitRangeList, JSON), on 127.0.0.1, and writes a kubeconfig for it;
// a namespace answered by a nil list gets a 500 with a proxy's long HTML
// page. It records the namespaces asked.
type apiServer struct {
	kubeconfig string
	mu         sync.Mutex
	asked      []string
}

func startAPIServer(t *testing.T, ranges map[string][]corev1.LimitRange) *apiServer {
	t.Helper()
	a := &apiServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ns string
		if _, err := fmt.Sscanf(strings.ReplaceAll(r.URL.Path, "/", " "), " api v1 namespaces %s limitranges", &ns); err != nil || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		a.mu.Lock()
		a.asked = append(a.asked, ns)
		a.mu.Unlock()
		list, ok := ranges[ns]
		if ok && list == nil {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusInternalServerError)
			for i := range 2000 {
				fmt.Fprintf(w, "<p>line %d of a proxy's\r\nerror page</p>\n", i)
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(corev1.LimitRangeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "LimitRangeList"}, Items: list})
	}))
	t.Cleanup(srv.Close)
	a.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	config := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: %q}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: {cluster: c, user: u, namespace: from-context}\ncurrent-context: x\n", srv.URL)
	if err := os.WriteFile(a.kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return a
}

func quantities(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

// installResources reads each Job of the plugin's output as kubectl does
// and returns its install container's resources, by Job name.
func installResources(t *testing.T, out string) map[string]corev1.ResourceRequirements {
	t.Helper()
	got := map[string]corev1.ResourceRequirements{}
	for _, doc := range strings.Split(out, "\n---\n") {
		var job batchv1.Job
		if err := yaml.UnmarshalStrict([]byte(doc), &job); err != nil {
			t.Fatalf("kubectl's reader refuses the output: %v\n%s", err, doc)
		}
		for _, c := range job.Spec.Template.Spec.InitContainers {
			if c.Name == inject.InitContainer {
				got[job.Name] = c.Resources
			}
		}
	}
	return got
}

// TestLimitRangesOnline: online, the plugin reads the LimitRanges of each
// namespace its objects go to (the object's own, else -n, else the
// context's), once, and fits the install container into them as the
// webhook does; a LimitRange that leaves it no room is an error naming
// it; an API server that fails is an error of one bounded line.
func TestLimitRangesOnline(t *testing.T) {
	min := []corev1.LimitRange{{ObjectMeta: metav1.ObjectMeta{Name: "floor"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Min: quantities("cpu", "200m", "memory", "64Mi")}}}}}
	tiny := []corev1.LimitRange{{ObjectMeta: metav1.ObjectMeta{Name: "tiny"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Max: quantities("memory", "8Mi")}}}}}
	api := startAPIServer(t, map[string][]corev1.LimitRange{"batch": min, "other": {}, "tiny": tiny, "broken": nil})
	containers := []string{"{name: app, image: i, command: [/app]}", "{name: proxy, image: cloud-sql-proxy, command: [/proxy]}"}
	inNamespace := func(name, ns string) string {
		return strings.Replace(jobOf("", containers...), "metadata: {name: j}", "metadata: {name: "+name+", namespace: "+ns+"}", 1)
	}
	plugin := func(input string, args ...string) (string, string, int) {
		var out, stderr bytes.Buffer
		code := Main(context.Background(), append([]string{"inject", "--mode", "pair", "--kubeconfig", api.kubeconfig, "-f", "-"}, args...), strings.NewReader(input), &out, &stderr)
		return out.String(), stderr.String(), code
	}

	input := inNamespace("a", "batch") + "---\n" + inNamespace("b", "batch") + "---\n" + strings.Replace(jobOf("", containers...), "name: j", "name: c", 1)
	out, stderr, code := plugin(input, "-n", "other")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	got := installResources(t, out)
	fitted := corev1.ResourceRequirements{Requests: quantities("cpu", "200m", "memory", "64Mi"), Limits: quantities("cpu", "200m", "memory", "64Mi")}
	layout := corev1.ResourceRequirements{Requests: quantities("cpu", "10m", "memory", "16Mi"), Limits: quantities("cpu", "100m", "memory", "32Mi")}
	for name, want := range map[string]corev1.ResourceRequirements{"a": fitted, "b": fitted, "c": layout} {
		if r := got[name]; !apiequality.Semantic.DeepEqual(r, want) {
			t.Errorf("Job %s: install container %v, want %v", name, r, want)
		}
	}
	if strings.Join(api.asked, ",") != "batch,other" {
		t.Errorf("namespaces asked: %q, want batch once, then other (-n)", api.asked)
	}
	if again, _, _ := plugin(out, "-n", "other"); again != out {
		t.Errorf("injecting the output again changes it:\n%s", again)
	}

	api.asked = nil
	if _, _, code := plugin(jobOf("", containers...)); code != 0 || strings.Join(api.asked, ",") != "from-context" {
		t.Errorf("exit %d, namespaces asked %q, want the context's", code, api.asked)
	}

	for ns, want := range map[string]string{
		"tiny":   "Job t, spec.template: namespace tiny: the namespace's LimitRange allows containers a memory limit of at most 8Mi, less than the 16Mi the job-signal-install init container needs",
		"broken": "read the LimitRanges of namespace broken, to fit the job-signal-install init container into them: ",
	} {
		out, stderr, code := plugin(inNamespace("t", ns))
		msg := strings.TrimSuffix(stderr, "\n")
		if code != 1 || out != "" || !strings.Contains(msg, want) || strings.Contains(msg, "\n") || len(msg) > 1536 {
			t.Errorf("namespace %s: exit %d, %d bytes out, stderr (%d bytes):\n%.2000s", ns, code, len(out), len(msg), msg)
		}
	}
}

// TestLimitRangesUnchecked: offline, or without any kubeconfig, the
// plugin says in one line on stderr that LimitRanges were not checked,
// and why; with nothing injected it says nothing.
func TestLimitRangesUnchecked(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	job := jobOf("", "{name: app, image: i, command: [/app]}", "{name: proxy, image: cloud-sql-proxy, command: [/proxy]}")
	for _, tc := range []struct {
		args  []string
		input string
		want  string
	}{
		{[]string{"--offline"}, job, "note: LimitRanges not checked (--offline): where one has a min, a max or a maxLimitRequestRatio that the job-signal-install init container's resources do not meet, the API server refuses these Pods\n"},
		{nil, job, "note: LimitRanges not checked (no kubeconfig: no --kubeconfig, $KUBECONFIG or ~/.kube/config): "},
		{[]string{"--offline"}, jobOf("", "{name: app, image: i, command: [/app]}"), "note: document 1 (line 1), Job j, spec.template: left unchanged: "},
	} {
		var out, stderr bytes.Buffer
		code := Main(context.Background(), append([]string{"inject", "--mode", "pair", "-f", "-"}, tc.args...), strings.NewReader(tc.input), &out, &stderr)
		if code != 0 || !strings.HasPrefix(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q, want one line starting %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestNoSidecarAnyMore: a Job injected when it had a sidecar, whose
// sidecar is ignored since, gets job-signal taken out on injecting again:
// the source as it was, with the annotation added, byte for byte.
func TestNoSidecarAnyMore(t *testing.T) {
	before := jobOf("{job-signal.dev/main: app}", "{name: app, image: i, command: [/app]}", "{name: migrate, image: i, command: [/migrate]}")
	injected, _, err := run(t, before, true)
	if err != nil || !strings.Contains(injected, inject.InitContainer) {
		t.Fatalf("%v\n%s", err, injected)
	}
	ignore := func(s string) string {
		return strings.Replace(s, "{job-signal.dev/main: app", "{job-signal.dev/main: app, job-signal.dev/ignore: migrate", 1)
	}
	out, stderr, err := run(t, ignore(injected), true)
	if err != nil || out != ignore(before) || !strings.Contains(stderr, "job-signal taken out: no sidecar") {
		t.Errorf("err %v, stderr %q, output:\n%s", err, stderr, out)
	}
}

// TestInjectAgainAfterAChange: an injected Job whose annotations changed
// is injected again; the check that uninject gives the source back holds
// against the source before the first injection, with the change.
func TestInjectAgainAfterAChange(t *testing.T) {
	before := jobOf("{job-signal.dev/main: app}", "{name: app, image: i, command: [/app]}", "{name: proxy, image: i, command: [/proxy]}")
	injected, _, err := run(t, before, true)
	if err != nil || !strings.Contains(injected, inject.InitContainer) {
		t.Fatalf("%v\n%s", err, injected)
	}
	change := func(s string) string {
		return strings.Replace(s, "{job-signal.dev/main: app", "{job-signal.dev/main: app, job-signal.dev/grace.proxy: 7s", 1)
	}
	again, stderr, err := run(t, change(injected), true)
	if err != nil || !strings.Contains(again, "7s") {
		t.Fatalf("inject again: err %v, stderr %q, output:\n%s", err, stderr, again)
	}
	back, _, err := run(t, again, false)
	if err != nil || back != change(before) {
		t.Errorf("uninject: err %v, output:\n%s\nwant:\n%s", err, back, change(before))
	}
}

// TestMetadataReadAsTheAPIServerDoes: a template whose metadata the API
// server cannot read (a label that is a number) is refused alike with and
// without LimitRanges to fit: the typed reading of its metadata is not
// left to the LimitRange check.
func TestMetadataReadAsTheAPIServerDoes(t *testing.T) {
	api := startAPIServer(t, map[string][]corev1.LimitRange{"default": {}})
	containers := []string{"{name: app, image: i, command: [/app]}", "{name: proxy, image: cloud-sql-proxy, command: [/proxy]}"}
	job := strings.Replace(jobOf("{job-signal.dev/main: app}", containers...), "metadata: {annotations:", "metadata: {labels: {a: 1}, annotations:", 1)
	if !strings.Contains(job, "labels: {a: 1}") {
		t.Fatalf("no label in\n%s", job)
	}
	for name, args := range map[string][]string{"offline": {"--offline"}, "online": {"--kubeconfig", api.kubeconfig, "-n", "default"}} {
		var out, stderr bytes.Buffer
		code := Main(context.Background(), append([]string{"inject", "--mode", "pair", "-f", "-"}, args...), strings.NewReader(job), &out, &stderr)
		if code != 1 || out.Len() > 0 || !strings.Contains(stderr.String(), "metadata.labels") {
			t.Errorf("%s: exit %d, %d bytes out, stderr %q", name, code, out.Len(), stderr.String())
		}
	}
}
