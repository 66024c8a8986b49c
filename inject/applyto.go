package inject

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// Undoing a previous injection and checking whether injecting again
// changes anything (what the webhook does when the API server calls it a
// second time for the same Pod) both apply ops to the template inject
// has already read. Doing that on the decoded template, rather than
// writing it as JSON, applying a JSON Patch and reading the result again,
// takes a fraction of the time. applyTo gives exactly what Apply gives,
// read back as readTemplate reads it; where it cannot be sure (anything
// inject does not write: negative indices, null on the way), it says so
// and the caller goes the JSON way, so that results and errors stay those
// of Apply.

// errNotHere: applyTo leaves these ops to Apply.
var errNotHere = errors.New("left to Apply")

// applyTo applies ops to doc (a JSON object as readTemplate decodes it)
// as Apply would to its JSON, and returns the result. doc is left as it
// is: the result shares the parts no op changes.
func applyTo(doc map[string]any, ops []Op) (map[string]any, error) {
	w := &writer{fresh: map[unsafe.Pointer]bool{}}
	var root any = doc
	for _, o := range ops {
		var err error
		switch o.Op {
		case "add", "replace":
			var v any
			if v, err = generic(o.Value); err == nil {
				root, err = w.at(root, pointerTokens(o.Path), func(c any, key string) (any, error) { return w.put(c, key, v, o.Op == "add") })
			}
		case "remove":
			root, err = w.at(root, pointerTokens(o.Path), func(c any, key string) (any, error) { c, _, err := w.take(c, key); return c, err })
		case "move":
			var v any
			root, err = w.at(root, pointerTokens(o.From), func(c any, key string) (any, error) {
				c, v, err = w.take(c, key)
				return c, err
			})
			if err == nil {
				root, err = w.at(root, pointerTokens(o.Path), func(c any, key string) (any, error) { return w.put(c, key, v, true) })
			}
		default:
			err = errNotHere
		}
		if err != nil {
			return nil, errNotHere
		}
	}
	out, _ := root.(map[string]any)
	return out, nil
}

// writer changes copies of the objects and lists of a document, each
// copied once, when first changed.
type writer struct{ fresh map[unsafe.Pointer]bool }

func (w *writer) ownMap(m map[string]any) map[string]any {
	if w.fresh[reflect.ValueOf(m).UnsafePointer()] {
		return m
	}
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	w.fresh[reflect.ValueOf(out).UnsafePointer()] = true
	return out
}

func (w *writer) ownList(l []any) []any {
	if len(l) > 0 && w.fresh[unsafe.Pointer(&l[0])] {
		return l
	}
	out := append(make([]any, 0, len(l)+1), l...)
	if len(out) > 0 {
		w.fresh[unsafe.Pointer(&out[0])] = true
	}
	return out
}

var pointerDecoder = strings.NewReplacer("~1", "/", "~0", "~")

// pointerTokens splits a JSON Pointer as Apply's library does; nil for
// the root, which applyTo leaves to Apply.
func pointerTokens(path string) []string {
	parts := strings.Split(path, "/")
	if len(parts) < 2 || parts[0] != "" {
		return nil
	}
	parts = parts[1:]
	for i, p := range parts {
		if strings.IndexByte(p, '~') >= 0 {
			parts[i] = pointerDecoder.Replace(p)
		}
	}
	return parts
}

// at calls last with the container of the value tokens point to and its
// last token, and returns node with the container last returns in its
// place. Every container on the way must exist and be an object or a
// list.
func (w *writer) at(node any, tokens []string, last func(container any, key string) (any, error)) (any, error) {
	if len(tokens) == 0 {
		return nil, errNotHere
	}
	if len(tokens) == 1 {
		return last(node, tokens[0])
	}
	switch n := node.(type) {
	case map[string]any:
		child, ok := n[tokens[0]]
		if !ok || child == nil {
			return nil, errNotHere
		}
		c, err := w.at(child, tokens[1:], last)
		if err != nil {
			return nil, err
		}
		n = w.ownMap(n)
		n[tokens[0]] = c
		return n, nil
	case []any:
		i, ok := listIndex(tokens[0], len(n))
		if !ok {
			return nil, errNotHere
		}
		c, err := w.at(n[i], tokens[1:], last)
		if err != nil {
			return nil, err
		}
		n = w.ownList(n)
		n[i] = c
		return n, nil
	}
	return nil, errNotHere
}

// put sets key of an object, or the list item at key: inserted (add:
// "-" or 0 to the list's length) or replaced (replace: an item that is
// there). An object's member is set either way, as Apply sets it.
func (w *writer) put(c any, key string, v any, insert bool) (any, error) {
	switch c := c.(type) {
	case map[string]any:
		c = w.ownMap(c)
		c[key] = v
		return c, nil
	case []any:
		if insert && key == "-" {
			return append(w.ownList(c), v), nil
		}
		n := len(c)
		if insert {
			n++
		}
		i, ok := listIndex(key, n)
		if !ok {
			return nil, errNotHere
		}
		c = w.ownList(c)
		if insert {
			c = slices.Insert(c, i, v)
		} else {
			c[i] = v
		}
		return c, nil
	}
	return nil, errNotHere
}

// take removes key (a member that is there, or an item) and returns it.
func (w *writer) take(c any, key string) (any, any, error) {
	switch c := c.(type) {
	case map[string]any:
		v, ok := c[key]
		if !ok {
			return nil, nil, errNotHere
		}
		c = w.ownMap(c)
		delete(c, key)
		return c, v, nil
	case []any:
		i, ok := listIndex(key, len(c))
		if !ok {
			return nil, nil, errNotHere
		}
		v := c[i]
		return slices.Delete(w.ownList(c), i, i+1), v, nil
	}
	return nil, nil, errNotHere
}

// listIndex reads an index below n as Apply's library does (strconv.Atoi);
// negative ones (which it counts from the end) are not inject's.
func listIndex(key string, n int) (int, bool) {
	i, err := strconv.Atoi(key)
	return i, err == nil && i >= 0 && i < n
}
