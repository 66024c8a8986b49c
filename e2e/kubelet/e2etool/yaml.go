package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// yamlToJSON converts a multi-document YAML stream (as kubectl reads it)
// into one JSON array, skipping empty documents.
func yamlToJSON(r io.Reader, w io.Writer) error {
	docs := []json.RawMessage{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return err
		}
		if string(j) == "null" {
			continue // a document holding only comments or "---"
		}
		docs = append(docs, j)
	}
	return json.NewEncoder(w).Encode(docs)
}
