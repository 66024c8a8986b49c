// The nodes of a YAML document's tree, allocated together.

package kubectl

import "go.yaml.in/yaml/v3"

// arena holds a tree's nodes and the slices of its collections, each
// kind in one allocation: a document's tree lives and dies whole.
type arena struct {
	nodes []snode
	ptrs  []*snode
	ints  []int
}

// newArena sizes an arena for the tree of root.
func newArena(root *yaml.Node) *arena {
	nodes, kids := 0, 0
	var count func(n *yaml.Node, depth int)
	count = func(n *yaml.Node, depth int) {
		if nodes++; depth > maxDepth {
			return // yamlNode refuses it
		}
		kids += len(n.Content)
		for _, c := range n.Content {
			count(c, depth+1)
		}
	}
	count(root, 0)
	return &arena{nodes: make([]snode, nodes), ptrs: make([]*snode, kids), ints: make([]int, kids)}
}

func (a *arena) node() *snode {
	if len(a.nodes) == 0 {
		return new(snode)
	}
	n := &a.nodes[0]
	a.nodes = a.nodes[1:]
	return n
}

// take cuts n items off the front of *from, for a slice that appends up
// to n without growing into the rest.
func take[T any](from *[]T, n int) []T {
	if len(*from) < n {
		return make([]T, 0, n)
	}
	s := (*from)[:0:n]
	*from = (*from)[n:]
	return s
}
