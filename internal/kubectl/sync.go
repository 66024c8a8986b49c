package kubectl

import (
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// syncNode edits the YAML node n, which old describes, so that it
// describes new, touching only what differs: unchanged fields keep their
// nodes, comments and order, and fields the typed decoding does not know
// are kept. old and new are decoded JSON of the same Go type.
func syncNode(n *yaml.Node, old, new any) {
	if reflect.DeepEqual(old, new) {
		return
	}
	switch o := old.(type) {
	case *omap:
		if nm, ok := new.(*omap); ok && n.Kind == yaml.MappingNode {
			syncMap(n, o, nm)
			return
		}
	case []any:
		if nl, ok := new.([]any); ok && n.Kind == yaml.SequenceNode {
			syncList(n, o, nl, nil)
			return
		}
	}
	replaceNode(n, toNode(new))
}

// replaceNode puts value in n's place, keeping n's comments.
func replaceNode(n, value *yaml.Node) {
	head, line, foot := n.HeadComment, n.LineComment, n.FootComment
	*n = *value
	n.HeadComment, n.LineComment, n.FootComment = head, line, foot
}

// insertBefore and insertAfter place a new key where a person would.
var (
	insertBefore = map[string][]string{"command": {"args", "workingDir"}, "initContainers": {"containers"}, "metadata": {"spec"}, "args": {"workingDir"}}
	insertAfter  = map[string][]string{"command": {"image", "name"}, "args": {"command", "image", "name"}}
)

func syncMap(n *yaml.Node, old, new *omap) {
	// The old nodes of command and args, whose words may move from one to
	// the other (a wrapped command moves into args).
	pool := newWordPool(mapValue(n, "command"), mapValue(n, "args"))
	_, argsStay := new.vals["args"]
	_, hadArgs := old.vals["args"]
	pool.merging = hadArgs && !argsStay
	var kept []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i].Value, n.Content[i+1]
		nv, inNew := new.vals[key]
		ov, inOld := old.vals[key]
		switch {
		case !inOld:
			// Unknown to the typed decoding: keep it.
		case !inNew:
			continue
		case key == "command" || key == "args":
			if ol, ok := ov.([]any); ok && value.Kind == yaml.SequenceNode {
				if nl, ok := nv.([]any); ok {
					syncList(value, ol, nl, pool)
					break
				}
			}
			syncNode(value, ov, nv)
		default:
			syncNode(value, ov, nv)
		}
		kept = append(kept, n.Content[i], value)
	}
	n.Content = kept
	for _, key := range new.keys {
		if _, inOld := old.vals[key]; inOld || mapValue(n, key) != nil {
			continue
		}
		value := compact(toNode(new.vals[key]))
		if list, ok := new.vals[key].([]any); ok && (key == "command" || key == "args") {
			value = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			syncList(value, nil, list, pool)
		}
		insertKey(n, key, value)
	}
}

// compact writes small new maps and lists of scalars in flow style, as
// people write them in manifests ({medium: Memory}, [ALL]); lists of
// objects stay one object a line.
func compact(n *yaml.Node) *yaml.Node {
	for _, c := range n.Content {
		compact(c)
	}
	if n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return n
	}
	width := 0
	for _, c := range n.Content {
		flowList := c.Kind == yaml.SequenceNode && c.Style&yaml.FlowStyle != 0
		if c.Kind != yaml.ScalarNode && !(n.Kind == yaml.MappingNode && flowList) || strings.Contains(c.Value, "\n") {
			return n
		}
		width += len(c.Value) + 2
	}
	if width <= 80 {
		n.Style = yaml.FlowStyle
	}
	return n
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func insertKey(n *yaml.Node, key string, value *yaml.Node) {
	pair := []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, value}
	at := len(n.Content)
	for _, before := range insertBefore[key] {
		if i := keyIndex(n, before); i >= 0 {
			at = i
			break
		}
	}
	if at == len(n.Content) {
		for _, after := range insertAfter[key] {
			if i := keyIndex(n, after); i >= 0 {
				at = i + 2
				break
			}
		}
	}
	n.Content = slices.Insert(n.Content, at, pair...)
}

func keyIndex(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// syncList edits the sequence n from old to new. Lists of named objects
// (containers, volumes, mounts) are matched by name; lists of words reuse
// the nodes of equal words from pool (or n itself), so quoting, block
// scalars and comments follow the words.
func syncList(n *yaml.Node, old, new []any, pool *wordPool) {
	if named(old) && named(new) {
		var content []*yaml.Node
		for _, e := range new {
			name := e.(*omap).vals["name"]
			if i := slices.IndexFunc(old, func(o any) bool { return o.(*omap).vals["name"] == name }); i >= 0 && i < len(n.Content) {
				syncNode(n.Content[i], old[i], e)
				content = append(content, n.Content[i])
				continue
			}
			content = append(content, styled(compact(toNode(e)), n.Content))
		}
		n.Content = content
		return
	}
	if len(old) == len(new) && len(old) == len(n.Content) && pool == nil {
		for i := range new {
			syncNode(n.Content[i], old[i], new[i])
		}
		return
	}
	if pool == nil {
		pool = newWordPool(n)
	}
	// A list keeps its look, unless it is new, or all its words come from
	// a list that goes away (uninject moving args back into command): then
	// it takes the look of the list its words come from.
	origin, adopt := n.Style, len(n.Content) == 0 || pool.merging
	own := map[*yaml.Node]bool{}
	for _, c := range n.Content {
		own[c] = true
	}
	model := pool.model
	var content []*yaml.Node
	for i, e := range new {
		if node, style, ok := pool.take(e); ok {
			if own[node] {
				adopt = false
			} else if i == 0 && adopt {
				origin = style
			}
			content = append(content, node)
			continue
		}
		word := toNode(e)
		if model != nil && model.Style != yaml.LiteralStyle && model.Style != yaml.FoldedStyle {
			word.Style = model.Style // new words quoted like the old ones
		}
		content = append(content, word)
	}
	if !adopt {
		origin = n.Style
	}
	n.Content, n.Style = content, origin&yaml.FlowStyle
}

// wordPool holds the scalar nodes of one or more sequences, with the
// style of the sequence each came from.
type wordPool struct {
	nodes  []*yaml.Node
	styles []yaml.Style
	model  *yaml.Node // a node whose quoting new words copy
	// merging: args is going away, its words move into command.
	merging bool
}

func newWordPool(seqs ...*yaml.Node) *wordPool {
	p := &wordPool{}
	for _, seq := range seqs {
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range seq.Content {
			p.nodes = append(p.nodes, c)
			p.styles = append(p.styles, seq.Style)
			if p.model == nil && c.Kind == yaml.ScalarNode {
				p.model = c
			}
		}
	}
	return p
}

// take removes and returns the first node holding word v.
func (p *wordPool) take(v any) (*yaml.Node, yaml.Style, bool) {
	word, ok := v.(string)
	if !ok {
		return nil, 0, false
	}
	i := slices.IndexFunc(p.nodes, func(n *yaml.Node) bool {
		return n.Kind == yaml.ScalarNode && n.Value == word && n.ShortTag() == "!!str"
	})
	if i < 0 {
		return nil, 0, false
	}
	node, style := p.nodes[i], p.styles[i]
	p.nodes, p.styles = slices.Delete(p.nodes, i, i+1), slices.Delete(p.styles, i, i+1)
	return node, style, true
}

// named: every element is an object with a name.
func named(list []any) bool {
	for _, e := range list {
		m, ok := e.(*omap)
		if !ok {
			return false
		}
		if _, ok := m.vals["name"].(string); !ok {
			return false
		}
	}
	return true
}

// styled gives a new list element the flow or block look of its siblings.
func styled(n *yaml.Node, siblings []*yaml.Node) *yaml.Node {
	if len(siblings) > 0 && siblings[len(siblings)-1].Style == yaml.FlowStyle {
		n.Style = yaml.FlowStyle
	}
	return n
}
