package inject

import (
	"fmt"
	"iter"
	"maps"
	"slices"
)

// How deep a template nests, counted in its JSON (checkDepth) or in its
// decoded tree (tooDeep) alike, and the walk of JSON outside its strings
// that checkDepth and colons (typedFrom's count of members in JSON)
// share.

// children are the values in v, an object or a list decoded as Parse
// decodes them; nil for anything else.
func children(v any) iter.Seq[any] {
	switch v := v.(type) {
	case map[string]any:
		return maps.Values(v)
	case []any:
		return slices.Values(v)
	}
	return nil
}

// tooDeep says whether objects and lists nest in v more than levels deep
// (v itself is one), as checkDepth counts them in JSON.
func tooDeep(v any, levels int) bool {
	items := children(v)
	if items == nil {
		return false
	}
	if levels == 0 {
		return true
	}
	for e := range items {
		if tooDeep(e, levels-1) {
			return true
		}
	}
	return false
}

// checkDepth refuses JSON nested deeper than MaxDepth, in one pass.
func checkDepth(data []byte) error {
	depth := 0
	for c := range outsideStrings(data) {
		switch c {
		case '{', '[':
			if depth++; depth > MaxDepth {
				return fmt.Errorf("nested more than %d levels deep: not a Pod template", MaxDepth)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// outsideStrings yields the bytes of JSON data that are not in a string,
// its quotes left out too.
func outsideStrings(data []byte) iter.Seq[byte] {
	return func(yield func(byte) bool) {
		inString, escaped := false, false
		for _, c := range data {
			switch {
			case inString && escaped:
				escaped = false
			case inString && c == '\\':
				escaped = true
			case c == '"':
				inString = !inString
			case inString:
			case !yield(c):
				return
			}
		}
	}
}

// colons counts the members of every object in JSON: a ':' outside
// strings each.
func colons(data []byte) int {
	n := 0
	for c := range outsideStrings(data) {
		if c == ':' {
			n++
		}
	}
	return n
}
