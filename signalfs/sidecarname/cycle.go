package sidecarname

import "slices"

// FindCycle looks for a cycle in an ordering among sidecars (--after: "a
// starts after b", --stop-after: "a stops after b"), reachable from any of
// starts along edges(name), the names a sidecar is ordered after. It
// returns the cycle's names with the first repeated at the end
// (a, b, a), or nil when there is none. inject checks a Pod's annotations
// with it before writing any flag; sidecar-watch checks what the
// directory says the other sidecars are ordered after.
func FindCycle(starts []string, edges func(name string) []string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	mark := map[string]int{}
	var path []string
	var visit func(name string) []string
	visit = func(name string) []string {
		mark[name] = onPath
		path = append(path, name)
		for _, next := range edges(name) {
			switch mark[next] {
			case onPath:
				i := slices.Index(path, next)
				return append(slices.Clone(path[i:]), next)
			case unseen:
				if c := visit(next); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		mark[name] = done
		return nil
	}
	for _, name := range starts {
		if mark[name] == unseen {
			if c := visit(name); c != nil {
				return c
			}
		}
	}
	return nil
}
