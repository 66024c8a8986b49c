package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// decodeJSON reads JSON into generic values, numbers as json.Number.
func decodeJSON(data []byte) any {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	return v
}

// scalarValue is what a scalar means, as Kubernetes' YAML decoding reads
// it: a string unless resolved to a number, bool or null.
func scalarValue(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool", "!!float", "!!int":
		var v any
		err := n.Decode(&v)
		return v, err
	}
	return n.Value, nil
}

// toValue converts a node tree (without aliases) to JSON-ready values.
// Errors name the path to the node; it is built only on the way out of an
// error, so deep documents cost no more than their size.
func toValue(n *yaml.Node, _ string) (any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key must be a string", k.Line)
			}
			if k.Value == "<<" && k.ShortTag() == "!!merge" {
				return nil, refuse(k.Line, "a YAML merge key (<<)", "write the fields out")
			}
			v, err := toValue(n.Content[i+1], "")
			if err != nil {
				return nil, fmt.Errorf("%s.%w", k.Value, err)
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		list := make([]any, len(n.Content))
		for i, e := range n.Content {
			v, err := toValue(e, "")
			if err != nil {
				return nil, fmt.Errorf("[%d].%w", i, err)
			}
			list[i] = v
		}
		return list, nil
	case yaml.ScalarNode:
		v, err := scalarValue(n)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	}
	return nil, refuse(n.Line, "a YAML alias (*)", "write the value out")
}
