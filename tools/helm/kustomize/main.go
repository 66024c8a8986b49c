// Command kustomize prints what `kubectl kustomize DIR` (kustomize build)
// prints for each directory given: the chart's tests render the plain
// `kubectl apply -k` path with it, without a kubectl.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kustomize DIR...")
		os.Exit(2)
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	for i, dir := range os.Args[1:] {
		res, err := k.Run(filesys.MakeFsOnDisk(), dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kustomize build %s: %v\n", dir, err)
			os.Exit(1)
		}
		out, err := res.AsYaml()
		if err != nil {
			fmt.Fprintf(os.Stderr, "kustomize build %s: %v\n", dir, err)
			os.Exit(1)
		}
		if i > 0 {
			fmt.Println("---")
		}
		os.Stdout.Write(out)
	}
}
