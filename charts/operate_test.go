package charts_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestDrainsAndUpgrades: what lets a drain finish and a rollout or an
// uninstall go by without a refused Pod (README, "Drains, upgrades and
// uninstall"): no PodDisruptionBudget unless asked for, and then one that
// never holds an unhealthy replica; replicas spread strictly over nodes;
// a rollout that adds before it removes; a replica that serves on while
// it leaves the endpoints; and, with Helm, the hook that unregisters the
// webhook first, allowed to delete that one configuration and nothing else.
func TestDrainsAndUpgrades(t *testing.T) {
	out, err := render(t, "")
	if err != nil {
		t.Fatal(err)
	}
	o := decode(t, out)
	if o.pdb != nil {
		t.Errorf("a PodDisruptionBudget by default: it would block the drain of a single node for ever")
	}
	d := o.deployment.Spec
	if s := d.Strategy.RollingUpdate; s == nil || s.MaxUnavailable == nil || s.MaxUnavailable.IntValue() != 0 || s.MaxSurge == nil || s.MaxSurge.IntValue() != 1 {
		t.Errorf("strategy %+v: want a rolling update with maxUnavailable 0, maxSurge 1", d.Strategy)
	}
	spread := d.Template.Spec.TopologySpreadConstraints
	if len(spread) != 1 || spread[0].WhenUnsatisfiable != corev1.DoNotSchedule || spread[0].NodeTaintsPolicy == nil ||
		*spread[0].NodeTaintsPolicy != corev1.NodeInclusionPolicyHonor || !slices.Equal(spread[0].MatchLabelKeys, []string{"pod-template-hash"}) {
		t.Errorf("topologySpreadConstraints %+v: want DoNotSchedule over hostnames, tainted nodes not counted, per rollout", spread)
	}
	c := d.Template.Spec.Containers[0]
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds != 5 {
		t.Errorf("lifecycle %+v: want a preStop sleep of shutdownDelaySeconds (5)", c.Lifecycle)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil {
		t.Error("no readiness probe: a rollout would stop the old replica before the new one serves")
	}
	checkUnregisterHook(t, o)

	out, err = render(t, "", "podDisruptionBudget.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	pdb := decode(t, out).pdb
	if pdb == nil || pdb.Spec.MaxUnavailable == nil || *pdb.Spec.MaxUnavailable != intstr.FromInt32(1) || pdb.Spec.MinAvailable != nil ||
		pdb.Spec.UnhealthyPodEvictionPolicy == nil || *pdb.Spec.UnhealthyPodEvictionPolicy != "AlwaysAllow" {
		t.Errorf("podDisruptionBudget.enabled=true: %+v; want maxUnavailable 1, unhealthy replicas always evictable", pdb)
	}

	out, err = render(t, plainValues)
	if err != nil {
		t.Fatal(err)
	}
	if plain := decode(t, out); len(plain.jobs) != 0 {
		t.Errorf("plain manifests (withoutHelm) carry Helm's uninstall hook: kubectl apply would run it at once")
	}
}

// checkUnregisterHook: on helm uninstall, first, a Job of the webhook's
// own image deletes the configuration and the policy's bindings, as a
// ServiceAccount that may delete those objects only.
func checkUnregisterHook(t *testing.T, o objects) {
	t.Helper()
	if len(o.jobs) != 1 {
		t.Fatalf("%d Jobs rendered, want the uninstall hook", len(o.jobs))
	}
	job := o.jobs[0]
	if job.Annotations["helm.sh/hook"] != "pre-delete" {
		t.Errorf("Job %s: hook %q, want pre-delete", job.Name, job.Annotations["helm.sh/hook"])
	}
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	want := "--mutating-webhook-configuration=" + o.config.Name
	if c.Image != o.deployment.Spec.Template.Spec.Containers[0].Image || len(c.Args) == 0 || c.Args[0] != "unregister" || !slices.Contains(c.Args, want) {
		t.Errorf("Job %s runs %s %q; want the webhook's image, unregister %s", job.Name, c.Image, c.Args, want)
	}
	var rules []rbacv1.PolicyRule
	for _, b := range o.clusterBindings {
		if b.Subjects[0].Name == pod.ServiceAccountName {
			rules = append(rules, o.clusterRoles[b.RoleRef.Name].Rules...)
		}
	}
	var bindings []string
	for _, which := range []string{"listed-namespaces", "namespaces", "pods"} {
		bindings = append(bindings, o.deployment.Name+"-"+which)
	}
	for _, b := range o.bindings {
		if !slices.Contains(bindings, b.Name) || !slices.Contains(c.Args, "--validating-admission-policy-binding="+b.Name) {
			t.Errorf("Job %s runs %q; want it to delete the policy's binding %s too (else the policy refuses Job Pods once the webhook is gone)", job.Name, c.Args, b.Name)
		}
	}
	wantRules := []rbacv1.PolicyRule{{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations"},
		ResourceNames: []string{o.config.Name}, Verbs: []string{"delete"}},
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingadmissionpolicybindings"},
			ResourceNames: bindings, Verbs: []string{"delete"}}}
	if fmt.Sprint(rules) != fmt.Sprint(wantRules) {
		t.Errorf("the hook's ServiceAccount %s may %+v; want %+v", pod.ServiceAccountName, rules, wantRules)
	}
	for _, b := range o.roleBindings {
		if b.Subjects[0].Name == pod.ServiceAccountName {
			t.Errorf("the hook's ServiceAccount is bound in %s too", b.Namespace)
		}
	}
}

// TestNamespaceRestricted: the Namespace the chart renders (createNamespace)
// enforces the restricted Pod Security Standard; e2e installs the chart in
// such a namespace, where the API server admits the webhook's and the
// hook's Pods only if they meet it.
func TestNamespaceRestricted(t *testing.T) {
	out, err := render(t, plainValues)
	if err != nil {
		t.Fatal(err)
	}
	r := decode(t, out)
	if len(r.namespaces) != 1 || r.namespaces[0].Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Fatalf("createNamespace: %+v; want one Namespace labelled pod-security.kubernetes.io/enforce=restricted", r.namespaces)
	}
}

// grant is one right the chart gives: a ServiceAccount's verbs on a
// resource (named objects only, if any), and where.
type grant struct {
	who, verbs, on, where string
}

// whereOf names where a binding gives its rights, as the README's table
// says it.
func whereOf(b rbacv1.RoleBinding) string {
	switch {
	case b.Namespace == "":
		return "cluster-wide"
	case b.Namespace == namespace:
		return "its own namespace"
	default:
		return "each of `namespaces`, `pullSecretNamespaces`"
	}
}

// grantsOf is every right the chart gives with values (and --set pairs).
func grantsOf(t *testing.T, values string, set ...string) map[grant]bool {
	t.Helper()
	out, err := render(t, values, set...)
	if err != nil {
		t.Fatal(err)
	}
	o := decode(t, out)
	bindings := o.roleBindings
	for _, b := range o.clusterBindings {
		bindings = append(bindings, &rbacv1.RoleBinding{Subjects: b.Subjects, RoleRef: b.RoleRef})
	}
	grants := map[grant]bool{}
	for _, b := range bindings {
		var rules []rbacv1.PolicyRule
		if b.RoleRef.Kind == "Role" {
			rules = o.roles[b.Namespace+"/"+b.RoleRef.Name].Rules
		} else {
			rules = o.clusterRoles[b.RoleRef.Name].Rules
		}
		for _, s := range b.Subjects {
			for _, r := range rules {
				for _, res := range r.Resources {
					on := "`" + res + "`"
					if len(r.ResourceNames) > 0 {
						on += " named `" + strings.Join(r.ResourceNames, "`, `") + "`"
					}
					grants[grant{"`" + s.Name + "`", "`" + strings.Join(r.Verbs, "`, `") + "`", on, whereOf(*b)}] = true
				}
			}
		}
	}
	return grants
}

// TestReadmeRights: the README's table "What it can do in your cluster"
// lists exactly the rights the chart gives, over every value set (and
// with mode pair, which drops one): one row per ServiceAccount, verbs,
// resource and place.
func TestReadmeRights(t *testing.T) {
	all := map[grant]bool{}
	for _, values := range append(valueSets(t), "") {
		for g := range grantsOf(t, values) {
			all[g] = true
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	table := readmeTable(t, string(readme), "### What it can do in your cluster")
	listed := map[grant]bool{}
	for _, row := range table {
		if len(row) != 5 {
			t.Fatalf("README's rights table: a row of %d columns, want 5 (who, verbs, on, where, why): %q", len(row), row)
		}
		g := grant{row[0], row[1], row[2], row[3]}
		listed[g] = true
		if !all[g] {
			t.Errorf("README lists %+v, which the chart does not grant", g)
		}
		if strings.TrimSpace(row[4]) == "" {
			t.Errorf("README lists %+v without why", g)
		}
	}
	for g := range all {
		if !listed[g] {
			t.Errorf("the chart grants %+v, which README's table \"What it can do in your cluster\" does not list", g)
		}
	}
}

// readmeTable is the first Markdown table after heading, its rows split
// into cells, without the header.
func readmeTable(t *testing.T, text, heading string) [][]string {
	t.Helper()
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no heading %q", heading)
	}
	var rows [][]string
	inTable := false
	for _, line := range strings.Split(text[i+len(heading)+2:], "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if separator.MatchString(line) || cells[0] == "who" {
			continue
		}
		rows = append(rows, cells)
	}
	return rows
}

var separator = regexp.MustCompile(`^\|(-+\|)+$`)
