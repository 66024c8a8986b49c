#!/bin/sh
# Pins a Kubernetes version for the e2e cluster: writes the module
# e2e/kubernetes/vMAJOR.MINOR/ that builds etcd and the Kubernetes
# components of that release (see e2e/README.md, "Kubernetes versions").
#
#   sh e2e/kubernetes/pin.sh v1.37.2
#
# k8s.io/kubernetes replaces its staging modules with folders of its own
# tree; outside it each must point at the published v0.MINOR.PATCH, as its
# own replace block lists them. etcd's server is pinned at the version
# k8s.io/kubernetes requires.
set -eu
version=${1:?usage: pin.sh vMAJOR.MINOR.PATCH}
case $version in v1.*.*) ;; *) echo "pin.sh: want a version like v1.37.2, got $version" >&2; exit 2 ;; esac
staging=v0.${version#v1.}
minor=${version%.*}
dir=$(dirname "$0")/$minor
gomod=$(GOWORK=off GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
test -n "$gomod" || { echo "pin.sh: the module proxy does not serve k8s.io/kubernetes@$version" >&2; exit 1; }
etcd=$(awk '$1 == "go.etcd.io/etcd/server/v3" { print $2; exit }' "$gomod")
test -n "$etcd" || { echo "pin.sh: k8s.io/kubernetes@$version does not require go.etcd.io/etcd/server/v3" >&2; exit 1; }
mkdir -p "$dir"
{
	echo "// The cluster make e2e runs for Kubernetes $minor: written by pin.sh, then go mod tidy."
	echo "module github.com/job-signal/job-signal/e2e/kubernetes/$minor"
	echo
	echo "go 1.24.0"
	echo
	echo "require ("
	echo "	go.etcd.io/etcd/server/v3 $etcd"
	echo "	k8s.io/kubernetes $version"
	echo ")"
	echo
	echo "replace ("
	awk -v v="$staging" '/^replace \(/ { on = 1; next } on && /^\)/ { on = 0 } on && $2 == "=>" { print "\t" $1 " => " $1 " " v }' "$gomod"
	echo ")"
	echo
	echo "// Built together in one go build (e2e/cluster/build.go); etcd's main package is its server module's root."
	echo "tool ("
	echo "	go.etcd.io/etcd/server/v3"
	for c in kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet; do
		echo "	k8s.io/kubernetes/cmd/$c"
	done
	echo ")"
} > "$dir/go.mod"
cd "$dir" && GOWORK=off GOFLAGS=-mod=mod go mod tidy
echo "pinned Kubernetes $version, etcd $etcd in $dir"
