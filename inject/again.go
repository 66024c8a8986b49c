package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A template injected before is undone, decided on again, and compared:
// the helpers of that, on the template as read (applyTo) where they can,
// else through JSON.

// withoutInjection is t with the ops that undo its injection applied, read again:
// on the template as read (applyTo), or, where that leaves them to Apply,
// through JSON.
func withoutInjection(t *template, ops []Op) (*template, error) {
	if doc, err := applyTo(t.raw, ops); err == nil {
		return templateOf(doc, nil)
	}
	raw, _ := json.Marshal(t.raw)
	origJSON, err := Apply(raw, ops)
	if err != nil {
		return nil, fmt.Errorf("undo the previous injection: %w", err)
	}
	return readTemplate(origJSON)
}

// unchangedBy says whether applying ops to t leaves it as it is: on the
// template as read (applyTo), or, where that leaves them to Apply,
// through JSON.
func (t *template) unchangedBy(ops []Op) (bool, error) {
	if doc, err := applyTo(t.raw, ops); err == nil {
		return sameJSON(t.raw, doc), nil
	}
	raw, _ := json.Marshal(t.raw)
	want, err := Apply(raw, ops)
	if err != nil {
		return false, err
	}
	same, _ := equalJSON(raw, want)
	return same, nil
}

// keepLayout drops the ops on the layout's volumes and init container.
func keepLayout(ops []Op) []Op {
	var out []Op
	for _, o := range ops {
		if o.layout {
			continue
		}
		out = append(out, o)
	}
	return out
}

func equalJSON(a, b []byte) (bool, error) {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return false, err
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb), nil
}
