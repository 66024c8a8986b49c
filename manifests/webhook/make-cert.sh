#!/usr/bin/env bash
# Creates job-signal-webhook's serving certificate without cert-manager:
# a private CA (kept nowhere: its key is deleted at the end), a certificate
# for the Service's DNS names signed by it, the Secret the Deployment
# mounts, and the CA in both webhooks' caBundle. Run it again to renew
# (the webhook reloads the files; the Secret volume updates within a
# minute or so). Needs openssl and kubectl.
#
#   manifests/webhook/make-cert.sh [NAMESPACE] [DAYS]
set -euo pipefail
ns=${1:-job-signal-system}
days=${2:-365}
svc=job-signal-webhook
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

openssl req -x509 -newkey rsa:2048 -nodes -days "$days" -subj "/CN=job-signal-webhook CA" \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=$svc.$ns.svc" \
  -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
printf 'subjectAltName=DNS:%s,DNS:%s.%s,DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local\nextendedKeyUsage=serverAuth\n' \
  "$svc" "$svc" "$ns" "$svc" "$ns" "$svc" "$ns" > "$dir/ext"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
  -days "$days" -extfile "$dir/ext" -out "$dir/tls.crt" 2>/dev/null

kubectl -n "$ns" create secret tls "$svc-tls" --cert="$dir/tls.crt" --key="$dir/tls.key" \
  --dry-run=client -o yaml | kubectl apply -f -
ca=$(base64 < "$dir/ca.crt" | tr -d '\n')
kubectl patch mutatingwebhookconfiguration "$svc" --type=json -p "[
  {\"op\": \"replace\", \"path\": \"/webhooks/0/clientConfig/caBundle\", \"value\": \"$ca\"},
  {\"op\": \"replace\", \"path\": \"/webhooks/1/clientConfig/caBundle\", \"value\": \"$ca\"}]"
echo "serving certificate for $svc.$ns.svc valid $days days; caBundle set"
