#!/usr/bin/env bash
# Switches what happens to a Pod that needs job-signal when it cannot be
# injected for a reason that may pass: the webhook down, a registry or the
# API server unavailable.
#
#   Fail    (the default) the Pod is denied for now and the Job controller
#           creates it again until it can be injected: no Job is left with
#           a Pod that never ends, but none starts during an outage.
#   Ignore  the Pod is admitted without job-signal: Jobs start during an
#           outage, and those with sidecars do not complete.
#
# A thin wrapper of the chart: its value failurePolicy sets both places
# that decide it (the webhook configuration's failurePolicy and the
# webhook's own), so this runs
#   helm upgrade RELEASE charts/job-signal-webhook --reuse-values --set failurePolicy=POLICY
# (RELEASE and its namespace: JOB_SIGNAL_WEBHOOK_RELEASE, default
# job-signal-webhook, and JOB_SIGNAL_WEBHOOK_NAMESPACE, default
# job-signal-system). Installed with kubectl apply -k: add the component
# manifests/kustomize/components/webhook-availability-first instead. Needs helm.
#
#   manifests/webhook/failure-policy.sh Fail|Ignore
set -euo pipefail
policy=${1:-}
if [ "$policy" != Fail ] && [ "$policy" != Ignore ]; then
  sed -n '2,21s/^# \{0,1\}//p' "$0" >&2
  exit 2
fi
chart=$(cd "$(dirname "$0")/../../charts/job-signal-webhook" && pwd)
exec helm upgrade "${JOB_SIGNAL_WEBHOOK_RELEASE:-job-signal-webhook}" "$chart" \
  --namespace "${JOB_SIGNAL_WEBHOOK_NAMESPACE:-job-signal-system}" \
  --reuse-values --set "failurePolicy=$policy" --wait
