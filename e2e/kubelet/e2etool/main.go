// Command e2etool does the few things the e2e suite needs from libraries
// that the main module should not depend on: YAML parsing, kustomize, and a
// CRI client. It lives in the e2e tools module (beside the pinned kubelet),
// so github.com/job-signal/job-signal's own go.mod stays small.
//
//	e2etool yaml2json < FILE          multi-document YAML to a JSON array
//	e2etool kustomize DIR             kustomize build DIR, as a JSON array
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
	case cmd == "yaml2json" && len(args) == 0:
		err = yamlToJSON(os.Stdin, os.Stdout)
	case cmd == "kustomize" && len(args) == 1:
		err = kustomize(args[0], os.Stdout)
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
	fmt.Fprintln(os.Stderr, "usage: e2etool yaml2json | kustomize DIR | cri-containers SOCK | cri-cleanup SOCK")
	os.Exit(2)
}
