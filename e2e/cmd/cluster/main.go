// Command cluster starts the e2e suite's one-node cluster and leaves it
// running, for another run (make e2e KUBECONFIG=...) or a person to use,
// and removes it again; as root, under the machine's e2e lock:
//
//	go run ./e2e/cmd/cluster up [-kubernetes v1.30]
//	go run ./e2e/cmd/cluster down
//
// up prints the kubeconfig and the make e2e line that attaches to it.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/job-signal/job-signal/e2e/cluster"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		slog.Error("cluster", "err", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	kube := fs.String("kubernetes", "", "the pinned Kubernetes version to run (default: $E2E_K8S_VERSION, else the newest)")
	if len(args) == 0 {
		return fmt.Errorf("usage: cluster up [-kubernetes VERSION] | cluster down")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "cluster: "+format+"\n", a...) }
	switch args[0] {
	case "up":
		c, err := cluster.Start(cluster.Config{Kubernetes: *kube, Keep: true, Logf: logf})
		if err != nil {
			return err
		}
		fmt.Printf("export KUBECONFIG=%s\n# kubectl: %s/kubectl\n# the suite on it, its images imported into its containerd:\n", c.Kubeconfig(), c.BinDir())
		fmt.Printf("make e2e KUBECONFIG=%s E2E_LOAD='%s'\n", c.Kubeconfig(), c.ImportCommand())
		return nil
	case "down":
		return cluster.Clean(cluster.Config{Logf: logf})
	}
	return fmt.Errorf("unknown command %q: up or down", args[0])
}
