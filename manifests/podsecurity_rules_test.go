package manifests

import (
	"encoding/json"
	"strings"
	"testing"
)

// compliantPod meets the restricted profile with settings at the Pod level
// where they may be, as the examples do.
const compliantPod = `{
  "metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/job": "runtime/default"}},
  "spec": {
    "securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "seccompProfile": {"type": "RuntimeDefault"},
      "sysctls": [{"name": "net.ipv4.ping_group_range", "value": "0 1"}]},
    "volumes": [{"name": "state", "emptyDir": {"medium": "Memory"}}, {"name": "cm", "configMap": {"name": "x"}}],
    "initContainers": [{"name": "install", "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}],
    "containers": [{"name": "job", "ports": [{"containerPort": 80}],
      "readinessProbe": {"httpGet": {"port": 80}},
      "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
        "seLinuxOptions": {"type": "container_t"}, "procMount": "Default"}}]
  }
}`

func TestRestrictedViolations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(meta, spec map[string]any)
		want   string // a violation containing this; "" for none
	}{
		{"compliant", func(meta, spec map[string]any) {}, ""},
		{"settings in every container instead of the Pod", func(meta, spec map[string]any) {
			delete(object(spec, "securityContext"), "runAsNonRoot")
			delete(object(spec, "securityContext"), "seccompProfile")
			for _, c := range podContainers(spec) {
				sc := object(c.fields, "securityContext")
				sc["runAsNonRoot"] = true
				sc["seccompProfile"] = map[string]any{"type": "Localhost", "localhostProfile": "p.json"}
			}
		}, ""},
		{"host network", set("hostNetwork", true), "spec.hostNetwork"},
		{"host PID", set("hostPID", true), "spec.hostPID"},
		{"host IPC", set("hostIPC", true), "spec.hostIPC"},
		{"hostPath volume", func(meta, spec map[string]any) {
			spec["volumes"] = append(list(spec, "volumes"), map[string]any{"name": "h", "hostPath": map[string]any{"path": "/"}})
		}, "volume h: type hostPath"},
		{"nfs volume", func(meta, spec map[string]any) {
			spec["volumes"] = append(list(spec, "volumes"), map[string]any{"name": "n", "nfs": map[string]any{}})
		}, "volume n: type nfs"},
		{"unsafe sysctl", func(meta, spec map[string]any) {
			object(spec, "securityContext")["sysctls"] = []any{map[string]any{"name": "kernel.msgmax"}}
		}, `"kernel.msgmax"`},
		{"pod runAsNonRoot false", podSC("runAsNonRoot", false), "spec.securityContext.runAsNonRoot"},
		{"runAsNonRoot nowhere", func(meta, spec map[string]any) {
			delete(object(spec, "securityContext"), "runAsNonRoot")
		}, `container "install": runAsNonRoot must be true`},
		{"pod runAsUser 0", podSC("runAsUser", 0.0), "spec.securityContext.runAsUser"},
		{"seccomp nowhere", func(meta, spec map[string]any) {
			delete(object(spec, "securityContext"), "seccompProfile")
		}, `container "job": seccompProfile.type must be`},
		{"pod seccomp Unconfined", podSC("seccompProfile", map[string]any{"type": "Unconfined"}), `seccompProfile.type "Unconfined"`},
		{"pod SELinux user", podSC("seLinuxOptions", map[string]any{"user": "system_u"}), "seLinuxOptions.user"},
		{"pod AppArmor unconfined", podSC("appArmorProfile", map[string]any{"type": "Unconfined"}), "appArmorProfile.type"},
		{"AppArmor annotation unconfined", func(meta, spec map[string]any) {
			object(meta, "annotations")["container.apparmor.security.beta.kubernetes.io/job"] = "unconfined"
		}, "annotation container.apparmor"},
		{"privileged", jobSC("privileged", true), "securityContext.privileged"},
		{"escalation allowed", jobSC("allowPrivilegeEscalation", true), `container "job": securityContext.allowPrivilegeEscalation`},
		{"escalation unset", func(meta, spec map[string]any) {
			delete(object(asObject(list(spec, "initContainers")[0]), "securityContext"), "allowPrivilegeEscalation")
		}, `container "install": securityContext.allowPrivilegeEscalation`},
		{"ALL not dropped", jobSC("capabilities", map[string]any{"drop": []any{"NET_RAW"}}), "capabilities.drop must include ALL"},
		{"capability added", jobSC("capabilities", map[string]any{"drop": []any{"ALL"}, "add": []any{"SYS_ADMIN"}}), "capabilities.add SYS_ADMIN"},
		{"container runAsNonRoot false", jobSC("runAsNonRoot", false), `container "job": securityContext.runAsNonRoot must not be false`},
		{"container runAsUser 0", jobSC("runAsUser", 0.0), `container "job": securityContext.runAsUser`},
		{"container seccomp Unconfined", jobSC("seccompProfile", map[string]any{"type": "Unconfined"}), `container "job": securityContext.seccompProfile`},
		{"container SELinux type", jobSC("seLinuxOptions", map[string]any{"type": "spc_t"}), `seLinuxOptions.type "spc_t"`},
		{"procMount Unmasked", jobSC("procMount", "Unmasked"), "procMount"},
		{"hostProcess", jobSC("windowsOptions", map[string]any{"hostProcess": true}), "hostProcess"},
		{"host port", func(meta, spec map[string]any) {
			asObject(list(asObject(list(spec, "containers")[0]), "ports")[0])["hostPort"] = 8080.0
		}, "hostPort 8080"},
		{"probe to another host", func(meta, spec map[string]any) {
			object(object(asObject(list(spec, "containers")[0]), "readinessProbe"), "httpGet")["host"] = "10.0.0.1"
		}, "readinessProbe.httpGet.host"},
		{"ephemeral container checked too", func(meta, spec map[string]any) {
			spec["ephemeralContainers"] = []any{map[string]any{"name": "debug"}}
		}, `container "debug": securityContext.allowPrivilegeEscalation`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pod map[string]any
			if err := json.Unmarshal([]byte(compliantPod), &pod); err != nil {
				t.Fatal(err)
			}
			meta, spec := object(pod, "metadata"), object(pod, "spec")
			tc.change(meta, spec)
			got := restrictedViolations(meta, spec)
			if tc.want == "" {
				if len(got) > 0 {
					t.Errorf("violations of a compliant Pod: %q", got)
				}
				return
			}
			for _, v := range got {
				if strings.Contains(v, tc.want) {
					return
				}
			}
			t.Errorf("no violation says %q; got %q", tc.want, got)
		})
	}
}

// set sets a Pod spec field.
func set(key string, value any) func(meta, spec map[string]any) {
	return func(meta, spec map[string]any) { spec[key] = value }
}

// podSC sets a field of the Pod's securityContext.
func podSC(key string, value any) func(meta, spec map[string]any) {
	return func(meta, spec map[string]any) { object(spec, "securityContext")[key] = value }
}

// jobSC sets a field of the securityContext of the container "job".
func jobSC(key string, value any) func(meta, spec map[string]any) {
	return func(meta, spec map[string]any) {
		object(asObject(list(spec, "containers")[0]), "securityContext")[key] = value
	}
}
