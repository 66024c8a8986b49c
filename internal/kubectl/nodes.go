package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// omap is a JSON object that keeps its keys in order, so that new YAML
// written from a Go struct lists its fields as the struct does.
type omap struct {
	keys []string
	vals map[string]any
}

// decodeOrdered parses JSON into omap, []any, string, json.Number, bool
// and nil.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return decodeValue(dec)
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		m := &omap{vals: map[string]any{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			m.keys = append(m.keys, k.(string))
			m.vals[k.(string)] = v
		}
		_, err := dec.Token()
		return m, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token()
		return list, err
	}
	return tok, nil
}

// toNode writes a decoded JSON value as YAML nodes.
func toNode(v any) *yaml.Node {
	switch v := v.(type) {
	case *omap:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range v.keys {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, toNode(v.vals[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range v {
			n.Content = append(n.Content, toNode(e))
		}
		return n
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(v.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v.String()}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
}

// toJSON writes a YAML node tree (without aliases) as JSON, keeping the
// order of keys; indent is the indentation of one level.
func toJSON(w io.Writer, n *yaml.Node, indent, prefix string) error {
	switch n.Kind {
	case yaml.DocumentNode:
		return toJSON(w, n.Content[0], indent, prefix)
	case yaml.MappingNode, yaml.SequenceNode:
		open, close, step := "{", "}", 2
		if n.Kind == yaml.SequenceNode {
			open, close, step = "[", "]", 1
		}
		if len(n.Content) == 0 {
			_, err := io.WriteString(w, open+close)
			return err
		}
		io.WriteString(w, open)
		inner := prefix + indent
		for i := 0; i < len(n.Content); i += step {
			if i > 0 {
				io.WriteString(w, ",")
			}
			io.WriteString(w, "\n"+inner)
			if step == 2 {
				key, _ := json.Marshal(n.Content[i].Value)
				w.Write(key)
				io.WriteString(w, ": ")
			}
			if err := toJSON(w, n.Content[i+step-1], indent, inner); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, "\n"+prefix+close)
		return err
	case yaml.ScalarNode:
		v, err := scalarValue(n)
		if err != nil {
			return err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%q cannot be written as JSON: %w", n.Value, err)
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("line %d: a YAML alias cannot be written as JSON", n.Line)
}

// scalarValue is what a scalar means, as Kubernetes' YAML decoding reads
// it: a string unless resolved to a number, bool or null.
func scalarValue(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool", "!!float":
		var v any
		err := n.Decode(&v)
		return v, err
	case "!!int":
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		return v, nil
	}
	return n.Value, nil
}

// toValue converts a node tree (without aliases) to JSON-ready values;
// path names the node in errors.
func toValue(n *yaml.Node, path string) (any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s: line %d: a key must be a string", path, k.Line)
			}
			if k.Value == "<<" && k.ShortTag() == "!!merge" {
				return nil, fmt.Errorf("%s: line %d: YAML merge keys (<<) cannot be edited in place; write the fields out", path, k.Line)
			}
			v, err := toValue(n.Content[i+1], join(path, k.Value))
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		list := make([]any, len(n.Content))
		for i, e := range n.Content {
			v, err := toValue(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			list[i] = v
		}
		return list, nil
	case yaml.ScalarNode:
		v, err := scalarValue(n)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, n.Line, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("%s: line %d: unexpected YAML alias", path, n.Line)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
