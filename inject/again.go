package inject

import "fmt"

// A template injected before is undone, decided on again, and compared,
// on the template as read.

// withoutInjection is t with the ops that undo its injection applied.
func withoutInjection(t *template, ops []Op) (*template, error) {
	doc, err := applyTo(t.raw, ops)
	if err != nil {
		return nil, fmt.Errorf("undo the previous injection: %w", err)
	}
	return templateOf(doc, nil, false)
}

// unchangedBy says whether applying ops to t leaves it as it is.
func (t *template) unchangedBy(ops []Op) (bool, error) {
	doc, err := applyTo(t.raw, ops)
	if err != nil {
		return false, err
	}
	return sameJSON(t.raw, doc), nil
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
