package kubectl

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checkAliases refuses a document whose aliases would expand to far more
// nodes than it has (a "billion laughs" alias bomb), naming where the
// expansion happens. It counts with memoisation, so the check itself is
// linear in the document.
func checkAliases(root *yaml.Node) error {
	if !hasAlias(root) {
		return nil // a tree: it stands for as many nodes as it has
	}
	memo := map[*yaml.Node]int{}
	nodes := countNodes(root, map[*yaml.Node]bool{})
	limit := 10*nodes + 10000
	if expandedSize(root, memo, 0) <= limit {
		return nil
	}
	// Go down while one child alone is over the limit: the node where the
	// children add up past it is where the aliases multiply.
	n, path := root, ""
	for {
		next, key := (*yaml.Node)(nil), ""
		for i, c := range n.Content {
			if expandedSize(c, memo, 0) > limit {
				next = c
				if n.Kind == yaml.MappingNode && i%2 == 1 {
					key = strings.TrimPrefix(path+"."+n.Content[i-1].Value, ".")
				} else if n.Kind == yaml.SequenceNode {
					key = fmt.Sprintf("%s[%d]", path, i)
				} else {
					key = path
				}
				break
			}
		}
		if next == nil {
			break
		}
		if next.Kind == yaml.AliasNode {
			next = next.Alias
		}
		n, path = next, key
	}
	if path == "" {
		path = "the top level"
	}
	return fmt.Errorf("%s (line %d): YAML aliases expand to more than %d nodes (an alias bomb?); write the values out", path, n.Line, limit)
}

// hasAlias says whether an alias is under n: without one, the document
// is a tree, and the counting maps are not needed.
func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

func countNodes(n *yaml.Node, seen map[*yaml.Node]bool) int {
	if n == nil || seen[n] {
		return 0
	}
	seen[n] = true
	total := 1
	for _, c := range n.Content {
		total += countNodes(c, seen)
	}
	return total
}

// expandedSize is the number of nodes n stands for once aliases are
// replaced by what they name. A cycle (which yaml.v3 does not build) is
// cut by depth.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int, depth int) int {
	if n == nil || depth > 10000 {
		return 1
	}
	if s, ok := memo[n]; ok {
		return s
	}
	var size int
	if n.Kind == yaml.AliasNode {
		size = expandedSize(n.Alias, memo, depth+1)
	} else {
		size = 1
		for _, c := range n.Content {
			size += expandedSize(c, memo, depth+1)
			size = min(size, 1<<40) // no overflow, however deep the bomb
		}
	}
	memo[n] = size
	return size
}
