package kubectl

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// setAnnotations brings the template's metadata.annotations from old to
// new, creating or removing the mappings as needed.
func setAnnotations(obj *yaml.Node, old, new map[string]string) {
	meta := mapValue(obj, "metadata")
	if meta == nil {
		meta = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		insertKey(obj, "metadata", meta)
	}
	ann := mapValue(meta, "annotations")
	if ann == nil {
		ann = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		insertKey(meta, "annotations", ann)
	}
	var kept []*yaml.Node
	for i := 0; i+1 < len(ann.Content); i += 2 {
		key := ann.Content[i].Value
		value, ok := new[key]
		if !ok {
			continue
		}
		if v := ann.Content[i+1]; v.Value != value || v.ShortTag() != "!!str" {
			replaceNode(v, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
		}
		kept = append(kept, ann.Content[i], ann.Content[i+1])
	}
	ann.Content = kept
	keys := make([]string, 0, len(new))
	for k := range new {
		if _, ok := old[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		ann.Content = append(ann.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: new[k]})
	}
	if len(ann.Content) == 0 {
		removeKey(meta, "annotations")
	}
	if len(meta.Content) == 0 {
		removeKey(obj, "metadata")
	}
}

func removeKey(n *yaml.Node, key string) {
	if i := keyIndex(n, key); i >= 0 {
		n.Content = slices.Delete(n.Content, i, i+2)
	}
}

// encode writes a changed document: YAML with kyaml's encoder, in the
// document's own sequence indentation; JSON with its own indentation.
func encode(d *document, root *yaml.Node) (string, error) {
	if !d.json {
		style := yaml.SequenceIndentStyle(yaml.DeriveSeqIndentStyle(d.raw))
		out, err := yaml.MarshalWithOptions(root, &yaml.EncoderOptions{SeqIndent: style})
		return string(out), err
	}
	indent := "    "
	if nl := strings.IndexByte(d.raw, '\n'); nl >= 0 {
		rest := d.raw[nl+1:]
		indent = rest[:len(rest)-len(strings.TrimLeft(rest, " \t"))]
	}
	var buf bytes.Buffer
	if err := toJSON(&buf, root, indent, ""); err != nil {
		return "", err
	}
	if !strings.Contains(d.raw, "\n") {
		var compact bytes.Buffer
		if err := json.Compact(&compact, buf.Bytes()); err != nil {
			return "", err
		}
		return compact.String(), nil
	}
	return buf.String(), nil
}
