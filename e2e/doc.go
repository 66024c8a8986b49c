// Package e2e is job-signal's end-to-end suite: on a one-node Kubernetes
// cluster it starts on this machine (package cluster: etcd, the API
// server, controller manager, scheduler, containerd and the kubelet), it
// builds the images locally and runs the Jobs of manifests/, the Job
// controller's cases and real sidecar programs through the API, judged by
// the real Job controller, on one of the pinned Kubernetes versions.
//
// The suite needs root and the build tag e2e:
//
//	go test -tags e2e -count=1 -v -timeout 45m -parallel 6 ./e2e/
//	E2E_K8S_VERSION=v1.30.14 go test -tags e2e ...   (default: the newest pinned)
//
// Without the tag only quick, unprivileged checks run (the Dockerfile's
// two final stages). README.md says how it works and how to debug it.
package e2e
