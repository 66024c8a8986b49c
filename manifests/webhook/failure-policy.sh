#!/usr/bin/env bash
# Switches what happens to a Pod that needs job-signal (more than one
# container) when it cannot be injected for a reason that may pass: the
# webhook down, a registry or the API server unavailable.
#
#   Fail    (as shipped) the Pod is denied for now and the Job controller
#           creates it again until it can be injected: no Job is left with
#           a Pod that never ends, but none starts during an outage.
#   Ignore  the Pod is admitted without job-signal: Jobs start during an
#           outage, and those with sidecars do not complete.
#
# It sets both places that decide it, which must agree: the
# failurePolicy of both webhooks of the MutatingWebhookConfiguration, and
# the webhook's own (JOB_SIGNAL_WEBHOOK_FAILURE_POLICY, which restarts its
# Pods). Needs kubectl.
#
#   manifests/webhook/failure-policy.sh Fail|Ignore
set -euo pipefail
policy=${1:-}
if [ "$policy" != Fail ] && [ "$policy" != Ignore ]; then
  sed -n '2,17s/^# \{0,1\}//p' "$0" >&2
  exit 2
fi
ns=${JOB_SIGNAL_WEBHOOK_NAMESPACE:-job-signal-system}
kubectl patch mutatingwebhookconfiguration job-signal-webhook --type=json -p "[
  {\"op\": \"replace\", \"path\": \"/webhooks/0/failurePolicy\", \"value\": \"$policy\"},
  {\"op\": \"replace\", \"path\": \"/webhooks/1/failurePolicy\", \"value\": \"$policy\"}]"
kubectl -n "$ns" set env deployment/job-signal-webhook JOB_SIGNAL_WEBHOOK_FAILURE_POLICY="$policy"
echo "failurePolicy $policy"
