package kubectl

import (
	"encoding/json"
	"testing"
)

func TestDifference(t *testing.T) {
	obj := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		a, b any
		want string // "" for equal
	}{
		{obj("a", "x"), obj("a", "x"), ""},
		{json.Number("1.0"), json.Number("1"), ""},
		{json.Number("1"), json.Number("2"), "the top level"},
		{obj("a", "x"), []any{}, "the top level"},
		{obj("a", "x"), obj("b", "x"), "the top level"},
		{obj("s", obj("c", []any{"x", obj("y~/", true)})), obj("s", obj("c", []any{"x", obj("y~/", false)})), "/s/c/1/y~0~1"},
		{obj("b", 1, "a", obj("z", 1)), obj("b", 2, "a", obj("z", 2)), "/a/z"}, // the first key in order
		{[]any{1, 2}, []any{1, 3}, "/1"},
		{[]any{1}, []any{1, 2}, "the top level"},
		{nil, false, "the top level"},
	} {
		at, differ := difference(tc.a, tc.b)
		if differ != (tc.want != "") || differ && at != tc.want {
			t.Errorf("difference(%v, %v) = %q, %v; want %q", tc.a, tc.b, at, differ, tc.want)
		}
	}
}
