// Values as decoding JSON gives them: what applyTo puts into a decoded
// document, and how two decoded documents compare.

package inject

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
)

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

// sameJSON says whether two decoded JSON values are equal as read with
// encoding/json's defaults: numbers compared as float64, and a number
// that is not one (out of its range) never equal.
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
