#!/usr/bin/env bash
# Enables namespaces for job-signal-webhook by hand, for an install with
# kubectl apply -k (or a Helm install's labelledNamespaces): labels each
# job-signal.dev/inject=enabled (its Jobs' Pods are then sent to the
# webhook) and lets the webhook read Secrets there, for the Pods'
# imagePullSecrets, with a RoleBinding to the ClusterRole
# job-signal-webhook-pull-secrets. The webhook can read no Secret in a
# namespace that is not enabled. With Helm, list the namespaces in the
# chart's value namespaces instead (pullSecretNamespaces for
# --secrets-only); both name the RoleBinding alike, so --disable one here
# before listing it there. Needs kubectl.
#
#   manifests/webhook/enable-namespace.sh NAMESPACE...
#   manifests/webhook/enable-namespace.sh --secrets-only NAMESPACE...  # Pods labelled one by one: no namespace label
#   manifests/webhook/enable-namespace.sh --disable NAMESPACE...       # undoes both
set -euo pipefail
mode=enable
case ${1:-} in
--secrets-only | --disable) mode=${1#--}; shift ;;
esac
if [ $# -eq 0 ] || [[ $1 == -* ]]; then
  sed -n '2,16s/^# \{0,1\}//p' "$0" >&2
  exit 2
fi
webhook_ns=${JOB_SIGNAL_WEBHOOK_NAMESPACE:-job-signal-system}
for ns in "$@"; do
  if [ "$mode" = disable ]; then
    kubectl -n "$ns" delete rolebinding job-signal-webhook-pull-secrets --ignore-not-found
    kubectl label namespace "$ns" job-signal.dev/inject-
    continue
  fi
  kubectl -n "$ns" create rolebinding job-signal-webhook-pull-secrets \
    --clusterrole=job-signal-webhook-pull-secrets --serviceaccount="$webhook_ns:job-signal-webhook" \
    --dry-run=client -o yaml | kubectl apply -f -
  if [ "$mode" = enable ]; then
    kubectl label namespace "$ns" job-signal.dev/inject=enabled --overwrite
  fi
done
