// Reading a JSON document into the same tree, with encoding/json's
// offsets.

package kubectl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// readJSON reads one JSON value into the editor's tree and into generic
// values (numbers as json.Number), as kubectl reads it, with
// encoding/json's tokens and their offsets. A key twice in one object is
// refused, naming it and its line. The root owns the whole text.
func readJSON(text string) (*node, any, error) {
	r := &jsonReader{lines: lines{text: text}, lead: len(text) - len(strings.TrimLeft(text, " \t\r\n")), dec: json.NewDecoder(strings.NewReader(text))}
	r.dec.UseNumber() // any number, however large, as it is written
	n, v, err := r.value(0)
	if err != nil {
		return nil, nil, err
	}
	if _, err := r.dec.Token(); err != io.EOF {
		return nil, nil, r.errorf("more than one value")
	}
	n.open, n.close, n.text = text[:n.at]+n.open, n.close+text[n.end:], text
	return n, v, nil
}

type jsonReader struct {
	lines
	lead int // spaces before the value
	dec  *json.Decoder
}

func (r *jsonReader) line(off int) int {
	return 1 + strings.Count(r.text[r.lead:max(off, r.lead)], "\n")
}

func (r *jsonReader) errorf(format string, args ...any) error {
	off := min(int(r.dec.InputOffset()), len(r.text))
	return fmt.Errorf("line %d: malformed JSON: %s", r.line(off), fmt.Sprintf(format, args...))
}

// value reads the next value; an object's keys are values too.
func (r *jsonReader) value(depth int) (*node, any, error) {
	if depth > maxDepth {
		return nil, nil, r.errorf("nested more than %d levels", maxDepth)
	}
	start := int(r.dec.InputOffset()) // after the last token; then spaces, ',' or ':'
	start += len(r.text[start:]) - len(strings.TrimLeft(r.text[start:], " \t\r\n,:"))
	tok, err := r.dec.Token()
	if err != nil {
		return nil, nil, r.errorf("%v", err)
	}
	n := &node{at: start, flow: true, col: -1}
	v, prev := any(tok), start+1 // prev: where the bytes of the next item begin
	switch tok {
	case json.Delim('{'), json.Delim('['):
		obj, list := map[string]any{}, []any{}
		n.kind = seqKind
		if tok == json.Delim('{') {
			n.kind = mapKind
		}
		for r.dec.More() {
			it := &item{}
			if n.kind == mapKind {
				k, _, err := r.value(depth + 1)
				if err != nil {
					return nil, nil, err
				}
				if _, dup := obj[k.str]; dup {
					return nil, nil, twice(strconv.Quote(k.str), "object", r.line(k.at))
				}
				it.at, it.key, it.keyText = k.at, k.str, k.text
			}
			val, kv, err := r.value(depth + 1)
			if err != nil {
				return nil, nil, err
			}
			if n.kind == mapKind {
				obj[it.key] = kv
				it.mid = r.text[it.at+len(it.keyText) : val.at]
			} else {
				it.at = val.at
				list = append(list, kv)
			}
			it.lead, it.val, prev = r.text[prev:it.at], val, val.end
			n.items = append(n.items, it)
		}
		if _, err := r.dec.Token(); err != nil {
			return nil, nil, r.errorf("%v", err)
		}
		if v = list; n.kind == mapKind {
			v = obj
		}
	default:
		n.str, _ = tok.(string)
	}
	n.end = int(r.dec.InputOffset())
	n.text = r.text[start:n.end]
	if n.kind != scalarKind {
		r.brackets(n, start, prev)
	}
	return n, v, nil
}

// meaning is what a node of the source means, numbers as json.Number.
func meaning(n *node) (any, error) {
	if n.y == nil {
		return decodeValue([]byte(n.text))
	}
	var v any
	if err := n.y.Decode(&v); err != nil {
		return nil, err
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeValue(js)
}

// byteOrderMark may start a file; kubectl drops it.
const byteOrderMark = "\ufeff"

// flowYAML says whether data, which starts with '{' but whose first
// value is not JSON (jsonErr), is YAML: kubectl then reads it as YAML.
func flowYAML(data []byte, jsonErr error) bool {
	if !strings.HasPrefix(jsonErr.Error(), "document 1 ") {
		return false // a JSON stream with a bad value later
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}
