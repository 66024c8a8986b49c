package main

import (
	"bytes"
	"io"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomize runs "kustomize build DIR" in-process and writes the result as
// a JSON array, so the suite can run what a user would apply.
func kustomize(dir string, w io.Writer) error {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return err
	}
	out, err := res.AsYaml()
	if err != nil {
		return err
	}
	return yamlToJSON(bytes.NewReader(out), w)
}
