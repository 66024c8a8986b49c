{{/* The name of every object: the release's, or RELEASE-job-signal-webhook. */}}
{{- define "jsw.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The Pods' own label, which the Deployment, the Service, the PodDisruptionBudget and the NetworkPolicy select on. */}}
{{- define "jsw.selectorLabels" -}}
app: {{ include "jsw.fullname" . }}
{{- end -}}

{{- define "jsw.labels" -}}
{{ include "jsw.selectorLabels" . }}
app.kubernetes.io/name: {{ default .Chart.Name .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- if not .Values.withoutHelm }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}
{{- end -}}

{{/* The Secret of the serving certificate: RELEASE-tls, mounted from
     cert-manager's or yours; RELEASE-certificate where the webhook keeps
     its own (generate), a Secret of another type than the kubernetes.io/tls
     one chart 0.1.0 rendered, which an upgrade cannot change in place. */}}
{{- define "jsw.tlsSecret" -}}
{{- $suffix := ternary "certificate" "tls" (eq .Values.certificates.source "generate") -}}
{{- default (printf "%s-%s" (include "jsw.fullname" .) $suffix) .Values.certificates.secretName -}}
{{- end -}}

{{/* The MutatingWebhookConfiguration's name: the webhook sets the caBundle
     of this one, and its ClusterRole names it. */}}
{{- define "jsw.webhookConfiguration" -}}
{{- include "jsw.fullname" . -}}
{{- end -}}

{{/* The Service's DNS names, which the serving certificate is for. */}}
{{- define "jsw.dnsNames" -}}
{{- $svc := include "jsw.fullname" . -}}
{{- list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.cluster.local" $svc .Release.Namespace) | toJson -}}
{{- end -}}

{{/* What the API server calls, which a certificate the webhook makes is
     for: the Service's names and, with the url value, its host. */}}
{{- define "jsw.certificateHosts" -}}
{{- $hosts := include "jsw.dnsNames" . | fromJsonArray -}}
{{- with .Values.url -}}
{{- $host := regexReplaceAll ":[0-9]+$" (urlParse .).host "" | trimPrefix "[" | trimSuffix "]" -}}
{{- $hosts = append $hosts $host -}}
{{- end -}}
{{- join "," $hosts -}}
{{- end -}}

{{- define "jsw.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end -}}

{{/* Namespaces the webhook may read Secrets in: the enabled ones and pullSecretNamespaces. */}}
{{- define "jsw.secretNamespaces" -}}
{{- concat .Values.namespaces .Values.pullSecretNamespaces | uniq | sortAlpha | toJson -}}
{{- end -}}

{{/* What every webhook of the configuration has but its namespaceSelector.
     objectSelector: "notDisabled" (every Pod not labelled
     job-signal.dev/inject=disabled) or "enabled" (only those labelled enabled). */}}
{{- define "jsw.webhookCommon" -}}
{{- $top := .top -}}
{{- $v := $top.Values -}}
objectSelector:
  {{- if eq .objectSelector "enabled" }}
  matchLabels: {job-signal.dev/inject: enabled}
  {{- else }}
  matchExpressions:
  - {key: job-signal.dev/inject, operator: NotIn, values: [disabled]}
  {{- end }}
matchConditions:
{{- include "jsw.matchConditions" . }}
rules:
- {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods], scope: Namespaced}
clientConfig:
  {{- if $v.url }}
  url: {{ $v.url }}
  {{- else }}
  service: {name: {{ include "jsw.fullname" $top }}, namespace: {{ $top.Release.Namespace }}, path: /mutate, port: 443}
  {{- end }}
  {{- if .caBundle }}
  caBundle: {{ .caBundle }}
  {{- end }}
failurePolicy: {{ $v.failurePolicy }}
sideEffects: None
admissionReviewVersions: [v1]
timeoutSeconds: {{ $v.timeoutSeconds }}
reinvocationPolicy: IfNeeded
{{- end -}}


{{/* Which Pods are sent at all: only those that can need job-signal, so
     that while the webhook is down or busy no other Pod waits for it. */}}
{{- define "jsw.matchConditions" }}
# Its Pods: a Job's (batch/v1), or labelled enabled (the objectSelector
# leaves out those labelled disabled). Not a Deployment's, a
# StatefulSet's, a DaemonSet's, a bare Pod or another controller's.
- name: job-pod-or-labelled
  expression: >-
    (has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(o,
    o.kind == 'Job' && o.apiVersion == 'batch/v1')) ||
    (has(object.metadata.labels) && 'job-signal.dev/inject' in object.metadata.labels &&
    object.metadata.labels['job-signal.dev/inject'] == 'enabled')
# Kubernetes restarts such a Pod's containers for ever: nothing to end.
- name: restart-policy-not-always
  expression: "!has(object.spec.restartPolicy) || object.spec.restartPolicy != 'Always'"
# A Pod of one container ends by itself (null: a Pod the API server
# will refuse anyway, not an error here).
- name: more-than-one-container
  expression: "has(object.spec.containers) && object.spec.containers != null && object.spec.containers.size() > 1"
# Injected already (by kubectl job-signal inject, or by this webhook
# before the API server calls it again): sent only when a container
# does not run job-signal or sidecar-watch (one a later webhook added,
# or one the Pod's job-signal.dev/ignore names, which the webhook leaves).
- name: not-injected-yet
  expression: >-
    !has(object.metadata.annotations) || !('job-signal.dev/injected' in object.metadata.annotations) ||
    object.spec.containers.exists(c, !has(c.command) || c.command.size() == 0 ||
    !(c.command[0] in ['/var/run/job-signal-bin/job-signal', '/var/run/job-signal-bin/sidecar-watch']))
# Wired by hand: job-signal's volumes without inject's record. The
# webhook leaves such a Pod alone; it also recognises hand wiring
# without the volumes, which it judges itself.
- name: not-wired-by-hand
  expression: >-
    (has(object.metadata.annotations) && 'job-signal.dev/injected' in object.metadata.annotations) ||
    !has(object.spec.volumes) || !object.spec.volumes.exists(v, v.name in ['job-signal', 'job-signal-bin'])
{{- end -}}
