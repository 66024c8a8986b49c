package sidecarname

import (
	"slices"
	"testing"
)

func TestFindCycle(t *testing.T) {
	for _, tc := range []struct {
		name   string
		starts []string
		edges  map[string][]string
		want   []string
	}{
		{"no edges", []string{"a", "b"}, nil, nil},
		{"a chain", []string{"a", "b", "c"}, map[string][]string{"a": {"b"}, "b": {"c"}}, nil},
		{"a diamond is no cycle", []string{"a"}, map[string][]string{"a": {"b", "c"}, "b": {"d"}, "c": {"d"}}, nil},
		{"two", []string{"a", "b"}, map[string][]string{"a": {"b"}, "b": {"a"}}, []string{"a", "b", "a"}},
		{"self", []string{"a"}, map[string][]string{"a": {"a"}}, []string{"a", "a"}},
		{"three, found from inside", []string{"x"}, map[string][]string{"x": {"a"}, "a": {"b"}, "b": {"c"}, "c": {"a"}}, []string{"a", "b", "c", "a"}},
		{"unreachable from the starts", []string{"x"}, map[string][]string{"a": {"b"}, "b": {"a"}}, nil},
		{"reached through a name not started from", []string{"a"}, map[string][]string{"a": {"ghost"}, "ghost": {"a"}}, []string{"a", "ghost", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FindCycle(tc.starts, func(n string) []string { return tc.edges[n] })
			if !slices.Equal(got, tc.want) {
				t.Errorf("FindCycle = %v, want %v", got, tc.want)
			}
		})
	}
}
