package kubectl

import (
	"strings"
	"testing"

	"github.com/job-signal/job-signal/inject"
)

// TestOneLine: a value fits on one line when its flow text is at most 80
// bytes (an object) or 100 (a list), however deep the text goes past the
// limit, and a scalar always does; what fits is its flow text.
func TestOneLine(t *testing.T) {
	s := style{step: 2, nl: "\n"}
	var values []any
	for n := 0; n < 40; n++ {
		word := strings.Repeat("w", n)
		values = append(values,
			word,
			[]string{word, word, word},
			inject.Fields{{Key: "k", Value: word}, {Key: "list", Value: []any{word, inject.Fields{{Key: "x", Value: word}}}}},
			map[string]any{"a": word, "b": []any{word, true, nil}, "c": map[string]string{"d": word}},
			[]any{inject.Fields{{Key: "name", Value: word}}, []string{word, "yes"}, word},
			inject.Fields{},
			[]any{},
		)
	}
	for _, v := range values {
		want := s.flow(v, 0)
		limit := len(want) // a scalar
		if _, _, k := contents(v); k == mapKind {
			limit = 80
		} else if k == seqKind {
			limit = 100
		}
		line, fits := s.oneLine(v)
		if fits != (len(want) <= limit) || fits && line != want {
			t.Errorf("oneLine(%v) = %q, %v; flow %q (%d bytes, limit %d)", v, line, fits, want, len(want), limit)
		}
	}
}
