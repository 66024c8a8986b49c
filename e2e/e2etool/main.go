// Command e2etool is the e2e cluster's CRI client, built from the pinned
// module beside the cluster's components (the main module does not need
// gRPC or the CRI API): nanosecond exit times, and removing sandboxes.
//
//	e2etool cri-containers SOCK       every CRI container, as JSON
//	e2etool cri-cleanup SOCK          stop and remove every pod sandbox
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; {
	case cmd == "cri-containers" && len(args) == 1:
		err = criContainers(args[0], os.Stdout)
	case cmd == "cri-cleanup" && len(args) == 1:
		err = criCleanup(args[0], os.Stderr)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2etool %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: e2etool cri-containers SOCK | cri-cleanup SOCK")
	os.Exit(2)
}
