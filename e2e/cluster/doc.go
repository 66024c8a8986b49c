// Package cluster starts and stops a real one-node Kubernetes cluster on
// this machine, for end-to-end tests: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and a kubelet registered as Node
// "localhost", of one of the Kubernetes versions pinned below
// e2e/kubernetes/ (the newest by default; built from its module, cached by
// version), with Debian's containerd and runc. Everything listens on
// 127.0.0.1, certificates are generated at start, state lives below one
// folder (/var/lib/job-signal-e2e) and every process in one cgroup
// (/job-signal-e2e); Stop stops each daemon by PID and fails if anything is
// left. It needs root.
//
//	c, err := cluster.Start(cluster.Config{Logf: log.Printf})
//	defer c.Stop()
//	ns, err := c.CreateNamespace(ctx, "mytest")
//	c.Client().BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
//
// No registry comes with it: LoadImage imports a single-layer image built
// in Go, BuildahBuild a Dockerfile target, TagImage adds a name; a test that
// starts a registry on 127.0.0.1 can push the same kind of image there
// (WriteArchive, BusyboxFiles), and containerd pulls from it over plain
// HTTP. A webhook
// test serves on 127.0.0.1 with a certificate from IssueServingCert and
// registers CAPEM as its caBundle. e2e/README.md documents the rest.
//
// Attach uses a running cluster instead, through its kubeconfig, and
// starts or removes nothing: its Features carry no Powers (the node is not
// known to be this machine), and the images go to its nodes through a
// registry or a user's load command (Config.Registry, Config.Load).
package cluster
