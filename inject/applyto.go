package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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

// generic is an op's value as readTemplate would read it from the patch
// Patch writes: strings, bools, nil, json.Number, []any, map[string]any.
func generic(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool:
		return v, nil
	case string:
		if utf8.ValidString(v) {
			return v, nil
		}
	case []string:
		if v == nil {
			return nil, nil
		}
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
			if !utf8.ValidString(s) {
				out = nil // json.Marshal writes U+FFFD instead: let it
				break
			}
		}
		if out != nil {
			return out, nil
		}
	case int:
		return json.Number(strconv.Itoa(v)), nil
	case []any:
		if v == nil {
			return nil, nil
		}
		out := make([]any, len(v))
		for i, e := range v {
			var err error
			if out[i], err = generic(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	case Fields: // the objects inject adds: the last of a key twice, as decoding keeps it
		out := make(map[string]any, len(v))
		for _, m := range v {
			e, err := generic(m.Value)
			if err != nil || !utf8.ValidString(m.Key) {
				out = nil
				break
			}
			out[m.Key] = e
		}
		if out != nil {
			return out, nil
		}
	}
	b, err := appendValue(nil, v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	err = dec.Decode(&out)
	return out, err
}

// sameJSON says whether two decoded JSON values are equal as equalJSON
// finds the documents they were read from: numbers compared as float64,
// and a number that is not one (out of its range) never equal.
func sameJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, x := range a {
			y, ok := b[k]
			if !ok || !sameJSON(x, y) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, errX := a.Float64()
		y, errY := b.Float64()
		return errX == nil && errY == nil && math.Float64bits(x) == math.Float64bits(y) // json.Marshal writes -0 and 0 apart
	}
	return reflect.TypeOf(a) == reflect.TypeOf(b) && a == b
}
