package jsonscan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// stdDecode is what Decode must agree with: encoding/json's Decoder with
// UseNumber into a map, as inject.Parse decodes when Decode declines.
func stdDecode(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	err := dec.Decode(&m)
	return m, err
}

// testDepth is the nesting Decode reads in these tests.
const testDepth = 10

// TestDecode: what Decode reads is what encoding/json reads; what it
// declines is left to encoding/json, which reads it or refuses it.
func TestDecode(t *testing.T) {
	read := []string{
		`{}`, ` {"a":1} `, `{"a":{"b":[1,-2.5e+3,0,true,false,null,"x"]},"c":[]}`,
		`{"s":"a\"b\\c\/d\b\f\n\r\t\u00e9\u2028"}`, `{"é":"ü€𝄞"}`,
		`{"n":-0.0E-7}`, `{"a":[[],{}]}`,
	}
	for _, in := range read {
		got, ok := Decode([]byte(in), testDepth)
		want, err := stdDecode([]byte(in))
		if !ok || err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Decode %#v (%v), encoding/json %#v (%v)", in, got, ok, want, err)
		}
	}
	declined := []string{
		``, `null`, `[]`, `"s"`, `{"a":1}x`, `{"a":1} {}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`,
		`{"a":tru}`, `{"a":truex}`, `{"a" 1}`, `{"a":1,}`, `{a:1}`, `{"a":"b`, "{\"a\":\"\x01\"}",
		"{\"a\":\"\xff\"}", `{"a":"\ud834\udd1e"}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":[1 2]}`,
		"\ufeff{}", `{"k":"v","k":"w"}`, `{"a":[{"k":1,"k":1}]}`, `{"a":` + strings.Repeat("[", testDepth) + strings.Repeat("]", testDepth) + `}`,
	}
	deepest := `{"a":` + strings.Repeat("[", testDepth-1) + strings.Repeat("]", testDepth-1) + `}`
	if _, ok := Decode([]byte(deepest), testDepth); !ok {
		t.Errorf("%d levels deep: declined, want it read", testDepth)
	}
	for _, in := range declined {
		if got, ok := Decode([]byte(in), testDepth); ok {
			t.Errorf("%q: Decode read %#v, want it declined", in, got)
		}
	}
}

// FuzzDecode: on any input, Decode reads exactly what encoding/json
// reads, with no key twice in an object, or declines.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b",{"c":null}],"d":true}`, `{"s":"\u00e9\n"}`, `{"x":-1.5e3}`, `{"k":1,"k":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := Decode(data, testDepth)
		if !ok {
			return
		}
		want, err := stdDecode(data)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: Decode read %#v, encoding/json %#v (%v)", data, got, want, err)
		}
		if keyTwice(data) {
			t.Fatalf("%q: Decode read it, but a key came twice in an object", data)
		}
	})
}

// keyTwice says whether a key came twice in an object of data, valid
// JSON, as encoding/json's tokens show it.
func keyTwice(data []byte) bool {
	type level struct {
		keys    map[string]bool // nil for a list
		wantKey bool
	}
	var open []level // innermost last
	done := func() { // a value ended: in an object, a key or its end comes next
		if n := len(open); n > 0 && open[n-1].keys != nil {
			open[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n := len(open); n > 0 && open[n-1].wantKey && tok != json.Delim('}') {
			k := tok.(string)
			if open[n-1].keys[k] {
				return true
			}
			open[n-1].keys[k], open[n-1].wantKey = true, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			open = append(open, level{keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			open = append(open, level{})
		case json.Delim('}'), json.Delim(']'):
			open = open[:len(open)-1]
			done()
		default:
			done()
		}
	}
}

// TestKeyTwice: the fuzz target's own check of a key given twice.
func TestKeyTwice(t *testing.T) {
	for in, want := range map[string]bool{`{}`: false, `{"a":1,"b":{"a":2}}`: false, `{"a":[{"k":1},{"k":2}]}`: false,
		`{"a":1,"a":2}`: true, `{"a":{"b":[1],"b":2}}`: true, `{"a":[{"k":1,"k":2}]}`: true, `{"a":{},"a":[]}`: true} {
		if got := keyTwice([]byte(in)); got != want {
			t.Errorf("%s: keyTwice %v, want %v", in, got, want)
		}
	}
}
