package charts_test

import (
	"strings"
	"testing"
)

// injectorConfigurations are the MutatingWebhookConfigurations of
// webhooks that add containers (or init containers) to Pods, as their
// projects name them by default: service meshes, secret and telemetry
// agents, policy engines that mutate. Found in each project's chart or
// manifests; Helm charts prefix most with the release's name, which
// starts with any letter, as these do.
var injectorConfigurations = []string{
	"istio-sidecar-injector",                                  // Istio (istiod; a revision adds -REVISION)
	"istio-sidecar-injector-canary",                           // Istio, a revision
	"istio-revision-tag-default",                              // Istio, revision tags
	"linkerd-proxy-injector-webhook-config",                   // Linkerd
	"kuma-admission-mutating-webhook-configuration",           // Kuma, Kong Mesh
	"consul-connect-injector",                                 // Consul (chart's fullname, release consul)
	"vault-agent-injector-cfg",                                // Vault (release vault)
	"dapr-sidecar-injector",                                   // Dapr
	"opentelemetry-operator-mutation",                         // OpenTelemetry operator (chart)
	"opentelemetry-operator-mutating-webhook-configuration",   // OpenTelemetry operator (manifests)
	"splunk-otel-collector-opentelemetry-operator-mutation",   // the same, in Splunk's chart
	"appmesh-mutating-webhook-configuration",                  // AWS App Mesh controller
	"appmesh-inject",                                          // AWS App Mesh, its former injector
	"osm-webhook-osm",                                         // Open Service Mesh
	"kyverno-resource-mutating-webhook-cfg",                   // Kyverno's mutate policies
	"gatekeeper-mutating-webhook-configuration",               // Gatekeeper's mutation
	"datadog-webhook",                                         // Datadog's admission controller
	"cloud-sql-proxy-operator-mutating-webhook-configuration", // Cloud SQL Proxy Operator
	"azure-wi-webhook-mutating-webhook-configuration",         // Azure Workload Identity
	"zalando-postgres-operator",                               // a name starting with z: still before zz-
}

// TestConfigurationSortsLast: the API server calls mutating webhooks in
// the order of their configurations' names (byte order, as Go compares
// strings: k8s.io/apiserver's configuration manager sorts them so), and
// never calls, when it calls them again, one it skipped the first time.
// job-signal's configuration, as rendered, sorts after every injector's,
// so that it sees the containers they add, whatever the release's name.
func TestConfigurationSortsLast(t *testing.T) {
	for _, set := range [][]string{nil, {"fullnameOverride=a"}, {"nameOverride=batch"}} {
		out, err := render(t, "", set...)
		if err != nil {
			t.Fatal(err)
		}
		name := decode(t, out).config.Name
		if !strings.HasPrefix(name, "zz-") {
			t.Errorf("--set %v: configuration %q; want it to start with zz-, after any name of a lowercase letter and another", set, name)
		}
		for _, other := range injectorConfigurations {
			if name <= other {
				t.Errorf("--set %v: configuration %q sorts before %q: the API server would call job-signal first", set, name, other)
			}
		}
	}
	out, err := render(t, "", "configurationName=webhooks-last.job-signal.dev")
	if err != nil {
		t.Fatal(err)
	}
	if name := decode(t, out).config.Name; name != "webhooks-last.job-signal.dev" {
		t.Errorf("configurationName set: %q", name)
	}
}
