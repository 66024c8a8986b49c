package manifests

import (
	"fmt"
	"slices"
	"strings"
)

// restrictedViolations returns how a Pod (its metadata and spec, as decoded
// from JSON) breaks the Pod Security Standards' "restricted" profile, which
// includes "baseline": one line per violation, naming the field and the
// container. The rules are those of k8s.io/pod-security-admission v0.34
// (Kubernetes 1.34, policy version "latest"), leaving out what only applies
// to Windows Pods or to Pods in a user namespace.
func restrictedViolations(meta, spec map[string]any) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	podSC := object(spec, "securityContext")

	// Baseline: the host's namespaces, processes and files.
	for _, key := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		if isTrue(spec, key) {
			fail("spec.%s must not be true", key)
		}
	}
	if isTrue(object(podSC, "windowsOptions"), "hostProcess") {
		fail("spec.securityContext.windowsOptions.hostProcess must not be true")
	}
	for _, s := range list(podSC, "sysctls") {
		if name, _ := asObject(s)["name"].(string); !safeSysctls[name] {
			fail("spec.securityContext.sysctls: %q is not a safe sysctl", name)
		}
	}
	bad = append(bad, seLinuxViolations("spec.securityContext", podSC)...)
	if t, ok := object(podSC, "appArmorProfile")["type"].(string); ok && t != "RuntimeDefault" && t != "Localhost" {
		fail("spec.securityContext.appArmorProfile.type %q: want RuntimeDefault or Localhost", t)
	}
	for key, value := range object(meta, "annotations") {
		if strings.HasPrefix(key, "container.apparmor.security.beta.kubernetes.io/") {
			if v, _ := value.(string); v != "" && v != "runtime/default" && !strings.HasPrefix(v, "localhost/") {
				fail("annotation %s=%q: want runtime/default or localhost/*", key, v)
			}
		}
	}

	// Restricted: only volume types that give no access to the node.
	for _, v := range list(spec, "volumes") {
		vol := asObject(v)
		for key := range vol {
			if key != "name" && !allowedVolumeTypes[key] {
				fail("volume %v: type %s is not allowed", vol["name"], key)
			}
		}
	}

	// Restricted: non-root and seccomp at the Pod level, or in every
	// container; a value set in a container must be allowed itself.
	podNonRoot, podNonRootSet := boolField(podSC, "runAsNonRoot")
	if podNonRootSet && !podNonRoot {
		fail("spec.securityContext.runAsNonRoot must not be false")
	}
	if uid, ok := podSC["runAsUser"].(float64); ok && uid == 0 {
		fail("spec.securityContext.runAsUser must not be 0")
	}
	podSeccomp, podSeccompSet := object(podSC, "seccompProfile")["type"].(string)
	if podSeccompSet && !validSeccomp(podSeccomp) {
		fail("spec.securityContext.seccompProfile.type %q: want RuntimeDefault or Localhost", podSeccomp)
	}
	podSeccompOK := podSeccompSet && validSeccomp(podSeccomp)

	for _, c := range podContainers(spec) {
		name := fmt.Sprintf("container %q", c.name)
		sc := object(c.fields, "securityContext")
		if isTrue(sc, "privileged") {
			fail("%s: securityContext.privileged must not be true", name)
		}
		if isTrue(object(sc, "windowsOptions"), "hostProcess") {
			fail("%s: securityContext.windowsOptions.hostProcess must not be true", name)
		}
		if v, ok := sc["procMount"].(string); ok && v != "Default" {
			fail("%s: securityContext.procMount %q: want Default", name, v)
		}
		bad = append(bad, seLinuxViolations(name+": securityContext", sc)...)
		if t, ok := object(sc, "appArmorProfile")["type"].(string); ok && t != "RuntimeDefault" && t != "Localhost" {
			fail("%s: securityContext.appArmorProfile.type %q: want RuntimeDefault or Localhost", name, t)
		}
		for _, p := range list(c.fields, "ports") {
			if port, _ := asObject(p)["hostPort"].(float64); port != 0 {
				fail("%s: hostPort %v is not allowed", name, port)
			}
		}
		for _, probe := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
			bad = append(bad, handlerHostViolations(name+": "+probe, object(c.fields, probe))...)
		}
		for _, hook := range []string{"postStart", "preStop"} {
			bad = append(bad, handlerHostViolations(name+": lifecycle."+hook, object(object(c.fields, "lifecycle"), hook))...)
		}

		if escalate, set := boolField(sc, "allowPrivilegeEscalation"); !set || escalate {
			fail("%s: securityContext.allowPrivilegeEscalation must be false", name)
		}
		caps := object(sc, "capabilities")
		if !slices.Contains(stringList(list(caps, "drop")), "ALL") {
			fail("%s: securityContext.capabilities.drop must include ALL", name)
		}
		for _, add := range stringList(list(caps, "add")) {
			if add != "NET_BIND_SERVICE" {
				fail("%s: securityContext.capabilities.add %s: only NET_BIND_SERVICE is allowed", name, add)
			}
		}
		if nonRoot, set := boolField(sc, "runAsNonRoot"); set && !nonRoot {
			fail("%s: securityContext.runAsNonRoot must not be false", name)
		} else if !set && !podNonRoot {
			fail("%s: runAsNonRoot must be true in the Pod's or the container's securityContext", name)
		}
		if uid, ok := sc["runAsUser"].(float64); ok && uid == 0 {
			fail("%s: securityContext.runAsUser must not be 0", name)
		}
		if t, set := object(sc, "seccompProfile")["type"].(string); set && !validSeccomp(t) {
			fail("%s: securityContext.seccompProfile.type %q: want RuntimeDefault or Localhost", name, t)
		} else if !set && !podSeccompOK {
			fail("%s: seccompProfile.type must be RuntimeDefault or Localhost in the Pod's or the container's securityContext", name)
		}
	}
	return bad
}

var (
	allowedVolumeTypes = setOf("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image",
		"persistentVolumeClaim", "projected", "secret")
	safeSysctls = setOf("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
		"net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports",
		"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
		"net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem")
	seLinuxTypes = setOf("", "container_t", "container_init_t", "container_kvm_t", "container_engine_t")
)

func validSeccomp(t string) bool { return t == "RuntimeDefault" || t == "Localhost" }

func seLinuxViolations(where string, sc map[string]any) []string {
	var bad []string
	opts := object(sc, "seLinuxOptions")
	if t, _ := opts["type"].(string); !seLinuxTypes[t] {
		bad = append(bad, fmt.Sprintf("%s.seLinuxOptions.type %q is not allowed", where, t))
	}
	for _, key := range []string{"user", "role"} {
		if v, _ := opts[key].(string); v != "" {
			bad = append(bad, fmt.Sprintf("%s.seLinuxOptions.%s must not be set", where, key))
		}
	}
	return bad
}

// handlerHostViolations: a probe or lifecycle handler must not reach
// another host than the Pod's own.
func handlerHostViolations(where string, handler map[string]any) []string {
	var bad []string
	for _, kind := range []string{"httpGet", "tcpSocket"} {
		if host, _ := object(handler, kind)["host"].(string); host != "" {
			bad = append(bad, fmt.Sprintf("%s.%s.host %q must not be set", where, kind, host))
		}
	}
	return bad
}

// container is one container of a Pod spec, of any kind.
type container struct {
	kind   string // containers, initContainers or ephemeralContainers
	name   string
	fields map[string]any
}

func podContainers(spec map[string]any) []container {
	var out []container
	for _, kind := range []string{"initContainers", "containers", "ephemeralContainers"} {
		for _, c := range list(spec, kind) {
			fields := asObject(c)
			name, _ := fields["name"].(string)
			out = append(out, container{kind: kind, name: name, fields: fields})
		}
	}
	return out
}

// Helpers over decoded JSON: a missing or mistyped field reads as empty.

func asObject(v any) map[string]any { m, _ := v.(map[string]any); return m }

func object(m map[string]any, key string) map[string]any { return asObject(m[key]) }

func list(m map[string]any, key string) []any { l, _ := m[key].([]any); return l }

func boolField(m map[string]any, key string) (value, set bool) {
	value, set = m[key].(bool)
	return value, set
}

func isTrue(m map[string]any, key string) bool { v, _ := boolField(m, key); return v }

func stringList(l []any) []string {
	var out []string
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func setOf(values ...string) map[string]bool {
	set := map[string]bool{}
	for _, v := range values {
		set[v] = true
	}
	return set
}
