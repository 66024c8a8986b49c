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

{{/* The MutatingWebhookConfiguration's name: the API server calls mutating
     webhooks in the order of their configurations' names, so it sorts
     after every injector's (values.yaml: configurationName). The webhook
     sets the caBundle of this one, and its ClusterRole names it. */}}
{{- define "jsw.configurationName" -}}
{{- default (printf "zz-%s" (include "jsw.fullname" .)) .Values.configurationName | trunc 253 -}}
{{- end -}}

{{/* The Pods the webhook serves, as up to three selections, each a webhook
     of the configuration (and a binding of the policy): the namespaces
     listed in the values, the namespaces labelled enabled, and Pods
     labelled enabled anywhere else (labelledPods). A JSON list of their keys. */}}
{{- define "jsw.selections" -}}
{{- $out := list -}}
{{- if .Values.namespaces }}{{ $out = append $out "listed-namespaces" }}{{ end -}}
{{- if .Values.labelledNamespaces }}{{ $out = append $out "namespaces" }}{{ end -}}
{{- if .Values.labelledPods }}{{ $out = append $out "pods" }}{{ end -}}
{{- $out | toJson -}}
{{- end -}}

{{- define "jsw.selectionWhat" -}}
{{- if eq . "listed-namespaces" -}}
The Pods of the namespaces listed in the chart's values (namespaces).
{{- else if eq . "namespaces" -}}
The Pods of namespaces labelled job-signal.dev/inject=enabled.
{{- else -}}
Pods labelled job-signal.dev/inject=enabled, in any other namespace.
{{- end -}}
{{- end -}}

{{/* A selection's namespaceSelector (.top, .which: a key of jsw.selections):
     never kube-system or the webhook's own namespace, and no namespace in
     two selections. */}}
{{- define "jsw.namespaceSelector" -}}
{{- $v := .top.Values -}}
{{- $expected := list "kube-system" .top.Release.Namespace -}}
namespaceSelector:
  matchExpressions:
  {{- if eq .which "listed-namespaces" }}
  - {key: kubernetes.io/metadata.name, operator: In, values: {{ $v.namespaces | toJson }}}
  - {key: kubernetes.io/metadata.name, operator: NotIn, values: {{ $expected | toJson }}}
  {{- else if eq .which "namespaces" }}
  - {key: job-signal.dev/inject, operator: In, values: [enabled]}
  - {key: kubernetes.io/metadata.name, operator: NotIn, values: {{ concat $expected $v.namespaces | toJson }}}
  {{- else }}
  {{- if $v.labelledNamespaces }}
  - {key: job-signal.dev/inject, operator: NotIn, values: [enabled]}
  {{- end }}
  - {key: kubernetes.io/metadata.name, operator: NotIn, values: {{ concat $expected $v.namespaces | toJson }}}
  {{- end }}
{{- end -}}

{{/* A selection's namespaceSelector and the Pods' objectSelector: every Pod
     not labelled job-signal.dev/inject=disabled, or for "pods" only those
     labelled enabled. */}}
{{- define "jsw.selectors" -}}
{{- include "jsw.namespaceSelector" . }}
objectSelector:
  {{- if eq .which "pods" }}
  matchLabels: {job-signal.dev/inject: enabled}
  {{- else }}
  matchExpressions:
  - {key: job-signal.dev/inject, operator: NotIn, values: [disabled]}
  {{- end }}
{{- end -}}

{{- define "jsw.clientConfig" -}}
{{- $top := .top -}}
clientConfig:
  {{- if $top.Values.url }}
  url: {{ $top.Values.url }}
  {{- else }}
  service: {name: {{ include "jsw.fullname" $top }}, namespace: {{ $top.Release.Namespace }}, path: /mutate, port: 443}
  {{- end }}
  {{- if .caBundle }}
  caBundle: {{ .caBundle }}
  {{- end }}
{{- end -}}

{{/* What every Pod webhook of the configuration has but its selectors. */}}
{{- define "jsw.webhookCommon" -}}
{{- $top := .top -}}
{{- $v := $top.Values -}}
matchConditions:
{{- include "jsw.matchConditions" . }}
rules:
- {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods], scope: Namespaced}
{{ include "jsw.clientConfig" . }}
failurePolicy: {{ $v.failurePolicy }}
sideEffects: None
admissionReviewVersions: [v1]
timeoutSeconds: {{ $v.timeoutSeconds }}
reinvocationPolicy: IfNeeded
{{- end -}}

{{/* What every Job webhook has but its namespaceSelector (.which: the
     selection). Only Jobs whose podFailurePolicy has an onExitCodes rule
     are sent, and not those whose Pods the selection leaves alone. */}}
{{- define "jsw.jobWebhookCommon" -}}
matchConditions:
- name: judges-exit-codes
  expression: >-
    has(object.spec.podFailurePolicy) && has(object.spec.podFailurePolicy.rules) &&
    object.spec.podFailurePolicy.rules.exists(r, has(r.onExitCodes))
{{- if eq .which "pods" }}
- name: template-labelled-enabled
  expression: >-
    has(object.spec.template.metadata) && has(object.spec.template.metadata.labels) &&
    'job-signal.dev/inject' in object.spec.template.metadata.labels &&
    object.spec.template.metadata.labels['job-signal.dev/inject'] == 'enabled'
{{- else }}
- name: template-not-disabled
  expression: >-
    !has(object.spec.template.metadata) || !has(object.spec.template.metadata.labels) ||
    !('job-signal.dev/inject' in object.spec.template.metadata.labels) ||
    object.spec.template.metadata.labels['job-signal.dev/inject'] != 'disabled'
{{- end }}
rules:
- {operations: [CREATE], apiGroups: [batch], apiVersions: [v1], resources: [jobs], scope: Namespaced}
{{ include "jsw.clientConfig" . }}
# Only a template annotation is at stake: a Job is never held up for it.
failurePolicy: Ignore
sideEffects: None
admissionReviewVersions: [v1]
timeoutSeconds: 5
reinvocationPolicy: Never
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
# does not run job-signal or sidecar-watch (one another webhook added,
# which this one, called after the injectors, then wraps; or one the
# Pod's job-signal.dev/ignore names, which the webhook leaves).
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
