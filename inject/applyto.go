package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// The one applier of inject's ops to a decoded document: what the API
// server makes of the webhook's JSON Patch (gopkg.in/evanphx/json-patch.v4,
// as the API server applies it, is the reference its tests hold it to),
// used to undo a previous injection, to see whether injecting again changes
// anything (the webhook's second call for the same Pod), and by the
// plugin's check of what it writes. The editor applies the same ops to the
// source bytes; nothing else applies them.
//
// RFC 6902's add, remove, replace and move, with the reference's readings
// of what the RFC leaves open: replace sets an object's member even when it
// is missing; a list index is read by strconv.Atoi, and one below zero
// counts from the end ("-1" is the last item, or the end for add). Null on
// the way to a path is not a container. Test and copy are not inject's and
// are refused; so is a pointer that is neither "" nor starts with "/" (the
// reference reads it from its second segment on).

// Apply applies ops to a JSON document (an object or a list) and writes
// the result as JSON: what the API server does with the webhook's patch.
func Apply(doc []byte, ops []Op) ([]byte, error) {
	if len(ops) == 0 {
		return doc, nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("read the document: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("read the document: more after its end")
	}
	out, err := ApplyDecoded(v, ops)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// ApplyDecoded applies ops to v, a JSON document decoded with numbers as
// json.Number, and returns the result decoded the same way. v is left as
// it is: the result shares the parts no op changes.
func ApplyDecoded(v any, ops []Op) (any, error) {
	switch v.(type) {
	case map[string]any, []any:
	default:
		return nil, fmt.Errorf("apply the patch: the document is a %s, not an object or a list", kindOf(v))
	}
	w := &writer{fresh: map[unsafe.Pointer]bool{}}
	root := v
	for _, o := range ops {
		var err error
		if root, err = w.apply(root, o); err != nil {
			return nil, fmt.Errorf("apply the patch: %s %s: %w", o.Op, o.Path, err)
		}
	}
	return root, nil
}

// applyTo is ApplyDecoded of a template as readTemplate decodes it.
func applyTo(doc map[string]any, ops []Op) (map[string]any, error) {
	out, err := ApplyDecoded(doc, ops)
	if err != nil {
		return nil, err
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, errors.New("apply the patch: the template is not an object any more")
	}
	return m, nil
}

// apply applies one op to root and returns the new root.
func (w *writer) apply(root any, o Op) (any, error) {
	switch o.Op {
	case "add", "replace":
		v, err := generic(o.Value)
		if err != nil {
			return nil, err
		}
		if o.Path == "" && o.Op == "replace" {
			switch v.(type) {
			case map[string]any, []any:
				return v, nil
			}
			return nil, errors.New("the whole document replaced by a value that is not an object or a list")
		}
		return w.at(root, o.Path, func(c any, key string) (any, error) { return w.put(c, key, v, o.Op == "add") })
	case "remove":
		return w.at(root, o.Path, func(c any, key string) (any, error) { c, _, err := w.take(c, key); return c, err })
	case "move":
		var v any
		root, err := w.at(root, o.From, func(c any, key string) (any, error) {
			c, taken, err := w.take(c, key)
			v = taken
			return c, err
		})
		if err != nil {
			return nil, fmt.Errorf("from %s: %w", o.From, err)
		}
		return w.at(root, o.Path, func(c any, key string) (any, error) { return w.put(c, key, v, true) })
	}
	return nil, errors.New("not an operation inject writes (add, remove, replace, move)")
}

// writer changes copies of the objects and lists of a document, each
// copied once, when first changed.
type writer struct{ fresh map[unsafe.Pointer]bool }

func (w *writer) ownMap(m map[string]any) map[string]any {
	if w.fresh[reflect.ValueOf(m).UnsafePointer()] {
		return m
	}
	out := make(map[string]any, len(m)+1)
	maps.Copy(out, m)
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

// at calls last with the container of the value path points to and its
// last token (RFC 6901: "~1" is "/", "~0" is "~"), and returns node with
// the container last returns in its place. Every container on the way
// must exist and be an object or a list.
func (w *writer) at(node any, path string, last func(container any, key string) (any, error)) (any, error) {
	if path == "" {
		return nil, errors.New("not a member or an item: the whole document")
	}
	if path[0] != '/' {
		return nil, fmt.Errorf("%q is not a JSON Pointer: it does not start with /", path)
	}
	return w.walk(node, path[1:], last)
}

func (w *writer) walk(node any, rest string, last func(container any, key string) (any, error)) (any, error) {
	token, rest, more := strings.Cut(rest, "/")
	token = unescape(token)
	if !more {
		return last(node, token)
	}
	var child any
	switch n := node.(type) {
	case map[string]any:
		child = n[token]
	case []any:
		i, err := listIndex(token, len(n), false)
		if err != nil {
			return nil, err
		}
		child = n[i]
	default:
		return nil, fmt.Errorf("a %s, not an object or a list, on the way", kindOf(node))
	}
	if child == nil {
		return nil, fmt.Errorf("no object or list at %q", token)
	}
	c, err := w.walk(child, rest, last)
	if err != nil {
		return nil, err
	}
	return w.put(node, token, c, false)
}

// put sets key of an object, or the list item at key: inserted (add:
// "-" or an index up to the list's length) or replaced (replace: an item
// that is there). An object's member is set either way.
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
		i, err := listIndex(key, len(c), insert)
		if err != nil {
			return nil, err
		}
		c = w.ownList(c)
		if insert {
			return slices.Insert(c, i, v), nil
		}
		c[i] = v
		return c, nil
	}
	return nil, fmt.Errorf("a %s is not an object or a list", kindOf(c))
}

// take removes key (a member that is there, or an item) and returns it.
func (w *writer) take(c any, key string) (any, any, error) {
	switch c := c.(type) {
	case map[string]any:
		v, ok := c[key]
		if !ok {
			return nil, nil, fmt.Errorf("no member %q", key)
		}
		c = w.ownMap(c)
		delete(c, key)
		return c, v, nil
	case []any:
		i, err := listIndex(key, len(c), false)
		if err != nil {
			return nil, nil, err
		}
		v := c[i]
		return slices.Delete(w.ownList(c), i, i+1), v, nil
	}
	return nil, nil, fmt.Errorf("a %s is not an object or a list", kindOf(c))
}

// listIndex reads key as an index of a list of n items (of n+1 places,
// to insert), by strconv.Atoi; one below zero counts from the end.
func listIndex(key string, n int, insert bool) (int, error) {
	i, err := strconv.Atoi(key)
	if err != nil {
		return 0, fmt.Errorf("%q is not a list index", key)
	}
	places := n
	if insert {
		places++
	}
	if i < 0 && i >= -places {
		i += places
	}
	if i < 0 || i >= places {
		return 0, fmt.Errorf("index %s is out of a list of %d items", key, n)
	}
	return i, nil
}

// kindOf names a decoded JSON value's type.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case []any:
		return "list"
	}
	return "object"
}
