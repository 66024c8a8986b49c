// long because it is the table of what inject derives from probes, args
// and images, one case a row, read as one table.

package inject

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/job-signal/job-signal/signalfs/sidecarspec"
)

func TestChooseMain(t *testing.T) {
	c := func(name, sidecar string) candidate { return candidate{name: name, sidecar: sidecar} }
	ignored := candidate{name: "done", ignored: true}
	main := func(names ...string) map[string]string {
		return map[string]string{Prefix + keyMain: strings.Join(names, ",")}
	}
	for _, tc := range []struct {
		name        string
		containers  []candidate
		annotations map[string]string
		defaultC    string
		want, err   string
	}{
		{"the annotation decides", []candidate{c("a", ""), c("b", "")}, main("b"), "", "b", ""},
		{"even for a known sidecar", []candidate{c("proxy", "cloud-sql-proxy"), c("job", "")}, main("proxy"), "", "proxy", ""},
		{"kubectl's default-container next", []candidate{c("a", ""), c("b", "")}, nil, "b", "b", ""},
		{"job-signal's annotation before kubectl's", []candidate{c("a", ""), c("b", "")}, main("a"), "b", "a", ""},
		{"proxy first: the one that is not a known sidecar", []candidate{c("cloud-sql-proxy", "cloud-sql-proxy"), c("migrate", "")}, nil, "", "migrate", ""},
		{"ignored containers do not count", []candidate{c("job", ""), ignored}, nil, "", "job", ""},
		{"two unknown: ask", []candidate{c("a", ""), c("b", "")}, nil, "", "", `"a" and "b" could each be`},
		{"three unknown: ask, naming all", []candidate{c("a", ""), c("b", ""), c("c", ""), c("p", "istio-proxy")}, nil, "", "", `"a", "b" and "c"`},
		{"only known sidecars: ask", []candidate{c("p", "istio-proxy"), c("q", "envoy")}, nil, "", "", "every container is a sidecar (p (istio-proxy), q (envoy))"},
		{"everything ignored", []candidate{ignored}, nil, "", "", "names every container"},
		{"annotation names nothing here", []candidate{c("a", "")}, main("x"), "", "", `"x" is not a container`},
		{"annotation names an ignored one", []candidate{c("a", ""), ignored}, main("done"), "", "", "is ignored"},
		{"annotation names two", []candidate{c("a", ""), c("b", "")}, main("a", "b"), "", "", "exactly one container"},
		{"default-container names nothing here", []candidate{c("a", ""), c("b", "")}, nil, "x", "", "kubectl.kubernetes.io/default-container"},

		// What the annotations say of sidecars is evidence too: each of
		// them is refused unless the container it names is a sidecar.
		{"after.NAME: NAME is a sidecar, and so is the one it names", []candidate{c("job", ""), c("config", ""), c("proxy", "")},
			map[string]string{Prefix + "after.config": "proxy"}, "", "job", ""},
		{"after.NAME beside a known sidecar", []candidate{c("job", ""), c("config", ""), c("proxy", "named so")},
			map[string]string{Prefix + "after.config": "proxy"}, "", "job", ""},
		{"stop-after.NAME", []candidate{c("proxy", ""), c("job", ""), c("logs", "")},
			map[string]string{Prefix + "stop-after.proxy": "logs"}, "", "job", ""},
		{"a sidecar's own annotation", []candidate{c("db", ""), c("job", "")},
			map[string]string{Prefix + "ready-tcp.db": "127.0.0.1:5432"}, "", "job", ""},
		{"a pod-wide annotation names no container", []candidate{c("db", ""), c("job", "")},
			map[string]string{Prefix + "grace": "5s"}, "", "", `"db" and "job" could each be`},
		{"wait-for names sidecars", []candidate{c("db", ""), c("job", "")},
			map[string]string{Prefix + "wait-for": "db"}, "", "job", ""},
		{"an empty order names none", []candidate{c("db", ""), c("job", ""), c("x", "")},
			map[string]string{Prefix + "after.x": ""}, "", "", `"db" and "job" could each be`},
		{"the main annotation still decides", []candidate{c("job", ""), c("config", "")},
			map[string]string{Prefix + "after.config": "job", Prefix + keyMain: "job"}, "", "job", ""},
		{"named as sidecars, every one: ask", []candidate{c("a", ""), c("b", "")},
			map[string]string{Prefix + "after.a": "b"}, "", "", "every container is a sidecar (a (annotation job-signal.dev/after.a), b (named by job-signal.dev/after.a))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSettings(tc.annotations)
			if err != nil {
				t.Fatal(err)
			}
			got, err := chooseMain(tc.containers, s, tc.defaultC)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tc.err)
				}
				if !strings.Contains(err.Error(), "annotation") {
					t.Errorf("the error names no annotation to set: %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestReadinessFromProbes(t *testing.T) {
	ports := []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "admin", ContainerPort: 9091}}
	http := func(path string, port intstr.IntOrString, host string, scheme corev1.URIScheme) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: port, Host: host, Scheme: scheme}}}
	}
	tcp := func(port intstr.IntOrString, host string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: port, Host: host}}}
	}
	for _, tc := range []struct {
		name               string
		readiness, startup *corev1.Probe
		key, value, err    string
	}{
		{"none", nil, nil, "", "", ""},
		{"http by number", http("/ready", intstr.FromInt32(15021), "", ""), nil, "ready-http", "http://127.0.0.1:15021/ready", ""},
		{"http by name", http("/healthz", intstr.FromString("http"), "", corev1.URISchemeHTTP), nil, "ready-http", "http://127.0.0.1:8080/healthz", ""},
		{"http with a host", http("/", intstr.FromInt32(80), "localhost", ""), nil, "ready-http", "http://localhost:80/", ""},
		{"http path without a slash", http("ready", intstr.FromInt32(80), "", ""), nil, "ready-http", "http://127.0.0.1:80/ready", ""},
		{"an IPv6 host", http("/r", intstr.FromInt32(80), "::1", ""), nil, "ready-http", "http://[::1]:80/r", ""},
		{"readiness before startup", tcp(intstr.FromInt32(5432), ""), http("/startup", intstr.FromInt32(9090), "", ""), "ready-tcp", "127.0.0.1:5432", ""},
		{"startup when no readiness", nil, http("/startup", intstr.FromInt32(9090), "", ""), "ready-http", "http://127.0.0.1:9090/startup", ""},
		{"tcp by name", tcp(intstr.FromString("admin"), ""), nil, "ready-tcp", "127.0.0.1:9091", ""},
		{"https: say so", http("/ready", intstr.FromInt32(8443), "", corev1.URISchemeHTTPS), nil, "", "", "is https, and sidecar-watch probes plain http only"},
		{"an unknown port name", tcp(intstr.FromString("nope"), ""), nil, "", "", `port "nope" is not the name`},
		{"headers", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80), HTTPHeaders: []corev1.HTTPHeader{{Name: "Host", Value: "x"}}}}}, nil, "", "", "sends headers"},
		{"exec", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"pg_isready", "-h", "127.0.0.1", "-p", "5432"}}}}, nil, "ready-exec", `["pg_isready","-h","127.0.0.1","-p","5432"]`, ""},
		{"exec with spaces and quotes", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", `test -e "/tmp/ready file" && echo <ok>`}}}}, nil, "ready-exec", `["sh","-c","test -e \"/tmp/ready file\" && echo <ok>"]`, ""},
		{"exec without a command", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{}}}, nil, "", "", "want a command"},
		{"grpc", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000}}}, nil, "", "", "gRPC"},
		{"port 0", tcp(intstr.FromInt32(0), ""), nil, "", "", "the port must be a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &corev1.Container{Name: "side", Ports: ports, ReadinessProbe: tc.readiness, StartupProbe: tc.startup}
			d, err := readinessFromProbes(c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), `container "side"`) {
					t.Fatalf("got %+v, %v; want an error with %q naming the container", d, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.key == "" {
				if d != nil {
					t.Fatalf("got %+v, want nothing", d)
				}
				return
			}
			if d == nil || d.key != tc.key || d.value != tc.value {
				t.Fatalf("got %+v, want %s %s", d, tc.key, tc.value)
			}
			check := map[string]func(string) error{
				"ready-http": func(v string) error { _, err := sidecarspec.HTTPURL(v); return err },
				"ready-tcp":  func(v string) error { _, err := sidecarspec.TCPAddr(v); return err },
				"ready-exec": func(v string) error { _, err := sidecarspec.Exec(v); return err },
			}
			if err := check[d.key](d.value); err != nil {
				t.Errorf("sidecar-watch would refuse %s: %v", d.value, err)
			}
		})
	}
}

// TestKnownSidecars checks each row of the table against what the sidecar
// does, as its documentation (Source) says: the image names it matches,
// and what its usual command lines make of readiness, quit and stop.
func TestKnownSidecars(t *testing.T) {
	for _, tc := range []struct {
		image      string
		line       []string
		env        []corev1.EnvVar
		want       string // the row's name
		ready      string
		quit       string
		stopSignal string
	}{
		{"gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.18.2", []string{"/cloud-sql-proxy", "--health-check", "--quitquitquit", "p:r:i"}, nil, "cloud-sql-proxy", "http://127.0.0.1:9090/startup", "http://127.0.0.1:9091/quitquitquit", ""},
		{"gcr.io/cloud-sql-connectors/cloud-sql-proxy:2", []string{"/cloud-sql-proxy", "--http-port=9190", "--health-check", "--admin-port", "9192", "--quitquitquit", "p:r:i"}, nil, "cloud-sql-proxy", "http://127.0.0.1:9190/startup", "http://127.0.0.1:9192/quitquitquit", ""},
		{"gcr.io/cloud-sql-connectors/cloud-sql-proxy:2", []string{"/cloud-sql-proxy", "p:r:i"}, nil, "cloud-sql-proxy", "", "", ""},
		{"gcr.io/cloudsql-docker/gce-proxy:1.33.2", []string{"/cloud_sql_proxy", "-instances=p:r:i=tcp:5432"}, nil, "cloud-sql-proxy", "", "", ""},
		{"gcr.io/alloydb-connectors/alloydb-auth-proxy:1.17.1", []string{"/alloydb-auth-proxy", "--health-check", "--quitquitquit", "--admin-port=9095", "projects/p/locations/r/clusters/c/instances/i"}, nil, "alloydb-auth-proxy", "http://127.0.0.1:9090/startup", "http://127.0.0.1:9095/quitquitquit", ""},
		{"docker.io/istio/proxyv2:1.24.0", []string{"/usr/local/bin/pilot-agent", "proxy", "sidecar"}, nil, "istio-proxy", "http://127.0.0.1:15021/healthz/ready", "http://127.0.0.1:15020/quitquitquit", ""},
		{"cr.l5d.io/linkerd/proxy:edge-24.11.1", []string{"/usr/lib/linkerd/linkerd2-proxy"}, nil, "linkerd-proxy", "http://127.0.0.1:4191/ready", "", ""},
		{"cr.l5d.io/linkerd/proxy:stable-2.14.10", []string{"/usr/lib/linkerd/linkerd2-proxy"}, []corev1.EnvVar{{Name: "LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED", Value: "true"}}, "linkerd-proxy", "http://127.0.0.1:4191/ready", "http://127.0.0.1:4191/shutdown", ""},
		{"envoyproxy/envoy:v1.31.0", []string{"envoy", "-c", "/etc/envoy.yaml"}, nil, "envoy", "", "", ""},
		{"hashicorp/vault:1.18", []string{"vault", "agent", "-config=/vault/agent.hcl"}, nil, "vault-agent", "", "", ""},
		{"cr.fluentbit.io/fluent/fluent-bit:3.2", nil, nil, "fluent-bit", "", "", ""},
		{"fluent/fluentd:v1.17-1", nil, nil, "fluentd", "", "", ""},
		{"quay.io/oauth2-proxy/oauth2-proxy:v7.7.1", []string{"/bin/oauth2-proxy", "--http-address=0.0.0.0:4180"}, nil, "oauth2-proxy", "http://127.0.0.1:4180/ping", "", ""},
		{"quay.io/oauth2-proxy/oauth2-proxy:v7.7.1", []string{"/bin/oauth2-proxy", "--http-address", "http://127.0.0.1:8081"}, nil, "oauth2-proxy", "http://127.0.0.1:8081/ping", "", ""},
		{"otel/opentelemetry-collector-contrib:0.114.0", nil, nil, "opentelemetry-collector", "", "", ""},
		{"bitnami/pgbouncer:1.23.1", nil, nil, "pgbouncer", "", "", "INT"},
		{"nginx:1.27", nil, nil, "nginx", "", "", "QUIT"},
		{"haproxy:3.0", nil, nil, "haproxy", "", "", "USR1"},
		{"postgres:16", nil, nil, "postgres", "", "", "INT"},
		{"registry.example/myapp:1", nil, nil, "", "", "", ""},
		{"registry.example/proxy:1", nil, nil, "", "", "", ""},
	} {
		t.Run(tc.image, func(t *testing.T) {
			k := knownSidecar(tc.image)
			name := ""
			if k != nil {
				name = k.Name
			}
			if name != tc.want {
				t.Fatalf("row %q, want %q", name, tc.want)
			}
			if k == nil {
				return
			}
			if got := fromTable(k.Ready, tc.line, tc.env); got != tc.ready {
				t.Errorf("ready %q, want %q", got, tc.ready)
			}
			if got := fromTable(k.Quit, tc.line, tc.env); got != tc.quit {
				t.Errorf("quit %q, want %q", got, tc.quit)
			}
			if k.StopSignal != tc.stopSignal {
				t.Errorf("stop signal %q, want %q", k.StopSignal, tc.stopSignal)
			}
			if k.Source == "" {
				t.Error("the row says nowhere where its facts come from")
			}
		})
	}
	for _, k := range KnownSidecars {
		if k.StopSignal != "" {
			if _, err := sidecarspec.StopSignal(k.StopSignal); err != nil {
				t.Errorf("%s: %v", k.Name, err)
			}
		}
	}
}

func TestVaultIsTheJobWithoutAgent(t *testing.T) {
	k := knownSidecar("hashicorp/vault:1.18")
	if k.isSidecar([]string{"vault", "kv", "get", "secret/x"}) || !k.isSidecar([]string{"sh", "-c", "vault agent -config=/c"}) {
		t.Error("vault: the CLI can be the job, the agent is a sidecar")
	}
	if knownSidecar("postgres:16").isSidecar([]string{"psql"}) {
		t.Error("postgres's image runs psql jobs: it must not be taken for a sidecar")
	}
}

func TestStopSignalOf(t *testing.T) {
	nginx := knownSidecar("nginx:1.27")
	for _, tc := range []struct {
		image           string
		k               *KnownSidecar
		want, warningOn string
	}{
		{"SIGQUIT", nil, "QUIT", ""},
		{"3", nil, "QUIT", ""},
		{"SIGTERM", nginx, "", ""},
		{"", nginx, "QUIT", ""},
		{"SIGWINCH", nil, "", "SIGWINCH"},
		{"SIGWINCH", nginx, "QUIT", "SIGWINCH"},
		{"", nil, "", ""},
	} {
		got, warning := stopSignalOf("c", tc.image, tc.k)
		if got != tc.want || (tc.warningOn == "") != (warning == "") || !strings.Contains(warning, tc.warningOn) {
			t.Errorf("image %q: got %q (warning %q), want %q", tc.image, got, warning, tc.want)
		}
	}
}

func TestWrappedBy(t *testing.T) {
	for _, tc := range []struct {
		line []string
		env  []corev1.EnvVar
		want string
	}{
		{[]string{"/kubexit/kubexit", "/app"}, nil, "kubexit"},
		{[]string{"/app"}, []corev1.EnvVar{{Name: "KUBEXIT_NAME", Value: "app"}}, "kubexit"},
		{[]string{"linkerd-await", "--shutdown", "--", "/app"}, nil, "linkerd-await"},
		{[]string{"/scuttle", "/app"}, nil, "scuttle"},
		{[]string{"/app", "kubexit"}, nil, ""},
	} {
		if got := wrappedBy(tc.line, tc.env); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.line, got, tc.want)
		}
		if tc.want != "" && !strings.Contains(migrationHint(tc.want, "c"), "remove") {
			t.Errorf("%s: the hint does not say what to remove", tc.want)
		}
	}
}

func TestFlagsToAnnotations(t *testing.T) {
	set := map[string]string{}
	waitFor, has, err := mainAnnotations([]flag{{"wait-for", "a,b"}, {"ready-timeout", "2m"}, {"restart-policy", "OnFailure"}}, set)
	if err != nil || !has || strings.Join(waitFor, ",") != "a,b" || set["ready-timeout"] != "2m" || len(set) != 1 {
		t.Errorf("main: %q %v %v %v", waitFor, has, set, err)
	}
	if _, _, err := mainAnnotations([]flag{{"signal-group", ""}}, set); err == nil || !strings.Contains(err.Error(), "--signal-group has no annotation") {
		t.Errorf("main: %v", err)
	}
	set = map[string]string{}
	if err := sidecarAnnotations("proxy", []flag{{"name", "proxy"}, {"ready-tcp", "127.0.0.1:5432"}, {"stop-signal", "INT"}}, set); err != nil || set["ready-tcp.proxy"] != "127.0.0.1:5432" || set["stop-signal.proxy"] != "INT" {
		t.Errorf("sidecar: %v %v", set, err)
	}
	if err := sidecarAnnotations("proxy", []flag{{"name", "other"}}, set); err == nil || !strings.Contains(err.Error(), "rename") {
		t.Errorf("sidecar named otherwise: %v", err)
	}
	if err := sidecarAnnotations("proxy", []flag{{"wait-for", "x"}}, set); err == nil {
		t.Error("a job-signal flag on sidecar-watch was taken")
	}
}

func TestRestartFlags(t *testing.T) {
	for policy, want := range map[corev1.RestartPolicy]string{"Never": "", "OnFailure": "--restart-policy OnFailure", "": "error", "Always": "error"} {
		flags, err := restartFlags(policy)
		if got := strings.Join(flags, " "); err != nil && want != "error" || err == nil && got != want {
			t.Errorf("%q: %q %v, want %q", policy, got, err, want)
		}
	}
}

// TestSidecarNamedSo: a container whose name says it is a sidecar (the
// names meshes and charts give their sidecars, or plainly "sidecar") is one,
// whatever its image; a name that only resembles one is no evidence.
func TestSidecarNamedSo(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"sidecar", true},
		{"proxy", true},
		{"log-sidecar", true},
		{"istio-proxy", true},
		{"linkerd-proxy", true},
		{"cloud-sql-proxy", true},
		{"fluent-bit", true},
		{"vault-agent", true},
		{"main", false},
		{"app", false},
		{"build-proxy", false},
		{"sidecar-injector-test", false},
		{"nginx", false},
		{"postgres", false},
	} {
		if got := sidecarNamedSo(tc.name); got != tc.want {
			t.Errorf("sidecarNamedSo(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMainBesideANamedSidecar: the usual two-container Job, written with
// no annotation and two images inject knows nothing of, has its job
// chosen when the other container is named as a sidecar.
func TestMainBesideANamedSidecar(t *testing.T) {
	for _, tc := range []struct {
		names      []string
		main, fail string
	}{
		{[]string{"main", "sidecar"}, "main", ""},
		{[]string{"proxy", "app"}, "app", ""},
		{[]string{"export", "istio-proxy"}, "export", ""},
		{[]string{"build-proxy", "db"}, "", "could each be"},
	} {
		var containers []candidate
		for _, n := range tc.names {
			c := corev1.Container{Name: n, Image: "registry.example/" + n + ":1"}
			containers = append(containers, candidate{name: n, sidecar: sidecarOf(&c, knownSidecar(c.Image))})
		}
		got, err := chooseMain(containers, settings{}, "")
		switch {
		case tc.fail != "" && (err == nil || !strings.Contains(err.Error(), tc.fail)):
			t.Errorf("%v: chose %q, err %v; want an error with %q", tc.names, got, err, tc.fail)
		case tc.fail == "" && got != tc.main:
			t.Errorf("%v: chose %q (%v), want %q", tc.names, got, err, tc.main)
		}
	}
}

// TestOrderAnnotationsNameSidecars: the Pod the order annotations describe
// (config starts after proxy) has its job chosen: the annotation says that
// config and proxy are sidecars, whatever their images.
func TestOrderAnnotationsNameSidecars(t *testing.T) {
	for _, annotations := range []string{
		`{"job-signal.dev/after.config": "proxy"}`,
		`{"job-signal.dev/stop-after.proxy": "config"}`,
		`{"job-signal.dev/after.config": "proxy", "job-signal.dev/stop-after.proxy": "config"}`,
	} {
		pl, err := Prepare([]byte(`{"metadata":{"annotations":` + annotations + `},"spec":{"restartPolicy":"Never","containers":[
			{"name":"job","image":"registry.example/job:1","command":["/job"]},
			{"name":"config","image":"registry.example/config:1","command":["/config"]},
			{"name":"proxy","image":"registry.example/tunnel:1","command":["/tunnel"]}]}}`))
		if err != nil {
			t.Fatalf("%s: %v", annotations, err)
		}
		if pl.p.main != "job" || strings.Join(pl.p.sidecars, ",") != "config,proxy" {
			t.Errorf("%s: main %q, sidecars %v", annotations, pl.p.main, pl.p.sidecars)
		}
	}
}
