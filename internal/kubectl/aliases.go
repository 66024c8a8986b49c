package kubectl

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checkAliases names where a document's aliases expand to far more nodes
// than it has (an alias bomb), which kubectl's reader refuses without
// saying where; in time linear in the document.
func checkAliases(root *yaml.Node) error {
	memo := map[*yaml.Node]int{}
	size := expandedSize(root, memo, 0)
	limit := 10*len(memo) + 10000 // memo holds every node of the document once
	if size <= limit {
		return nil
	}
	// Down while one child alone is over the limit.
	n, path := root, ""
	for next := n; next != nil; {
		n, next = next, nil
		for i, c := range n.Content {
			if expandedSize(c, memo, 0) <= limit {
				continue
			}
			switch {
			case n.Kind == yaml.MappingNode && i%2 == 1:
				path = strings.TrimPrefix(path+"."+n.Content[i-1].Value, ".")
			case n.Kind == yaml.SequenceNode:
				path = fmt.Sprintf("%s[%d]", path, i)
			}
			if next = c; c.Kind == yaml.AliasNode {
				next = c.Alias
			}
			break
		}
	}
	return fmt.Errorf("%s (line %d): YAML aliases expand to more than %d nodes (an alias bomb?); write the values out", orRoot(path), n.Line, limit)
}

// expandedSize is the number of nodes n stands for, aliases expanded.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int, depth int) int {
	if n == nil || depth > 10000 {
		return 1
	}
	if s, ok := memo[n]; ok {
		return s
	}
	size := 1
	if n.Kind == yaml.AliasNode {
		size = expandedSize(n.Alias, memo, depth+1)
	}
	for _, c := range n.Content {
		size = min(size+expandedSize(c, memo, depth+1), 1<<40) // no overflow, however deep the bomb
	}
	memo[n] = size
	return size
}
