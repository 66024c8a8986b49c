// Package e2e is job-signal's end-to-end suite: it starts containerd and a
// standalone kubelet on this machine, builds the images locally, and runs
// the Pods of manifests/ (and a few test workloads) as static Pods.
//
// The suite needs root and the build tag e2e:
//
//	go test -tags e2e -count=1 -v -timeout 45m ./e2e/
//
// Without the tag only quick, unprivileged checks run (the Dockerfile's
// two final stages). README.md says how it works and how to debug it.
package e2e
