package jsonscan

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Decode reads data, a JSON object in memory, into the value
// encoding/json's Decoder gives with UseNumber: maps, slices, strings,
// json.Number, bools and nils. It is the Scanner's grammar over a byte
// slice instead of a stream, and exists because it decodes a Pod for much
// less CPU and memory than encoding/json (BenchmarkDecode, and the
// webhook's row in BENCHMARKS.md): decoding the Pod is among the largest
// parts of the webhook's work per request.
//
// ok is false wherever it is not sure to read data as encoding/json
// would: anything but one object (white space around it), objects and
// arrays nested more than maxDepth levels deep (the object itself is
// one), bytes that are not UTF-8, an escaped surrogate, any error. It is
// false for a key given twice in one object too, so that a value Decode
// gives says all its JSON says, member for member. The caller then
// decodes data with encoding/json, whose answer or error stands, so
// Decode never has to say why.
//
// Strings without escapes are slices of one copy of data, made once:
// the value keeps that copy alive as long as any of them is held.
func Decode(data []byte, maxDepth int) (obj map[string]any, ok bool) {
	d := decoder{src: string(data), maxDepth: maxDepth}
	d.space()
	if !d.at('{') {
		return nil, false
	}
	obj, ok = d.object(1)
	d.space()
	if !ok || d.i != len(d.src) {
		return nil, false
	}
	return obj, true
}

type decoder struct {
	src      string
	i        int
	maxDepth int
}

func (d *decoder) at(c byte) bool { return d.i < len(d.src) && d.src[d.i] == c }

func (d *decoder) space() {
	for d.i < len(d.src) {
		switch d.src[d.i] {
		case ' ', '\t', '\r', '\n':
			d.i++
		default:
			return
		}
	}
}

// value reads the value at the reader, which is depth levels deep.
func (d *decoder) value(depth int) (any, bool) {
	d.space()
	if d.i >= len(d.src) {
		return nil, false
	}
	switch d.src[d.i] {
	case '{':
		return d.object(depth)
	case '[':
		return d.array(depth)
	case '"':
		return d.str()
	case 't':
		return true, d.word("true")
	case 'f':
		return false, d.word("false")
	case 'n':
		return nil, d.word("null")
	}
	return d.number()
}

// object reads an object, the reader at its '{'.
func (d *decoder) object(depth int) (map[string]any, bool) {
	if depth > d.maxDepth {
		return nil, false
	}
	d.i++
	m := map[string]any{}
	if d.space(); d.at('}') {
		d.i++
		return m, true
	}
	for {
		if d.space(); !d.at('"') {
			return nil, false
		}
		key, ok := d.str()
		if d.space(); !ok || !d.at(':') {
			return nil, false
		}
		d.i++
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		n := len(m)
		if m[key] = v; len(m) == n {
			return nil, false // a key given twice: the caller reads it (the last, in encoding/json)
		}
		switch more, ok := d.next('}'); {
		case !ok:
			return nil, false
		case !more:
			return m, true
		}
	}
}

// array reads an array, the reader at its '['.
func (d *decoder) array(depth int) ([]any, bool) {
	if depth > d.maxDepth {
		return nil, false
	}
	d.i++
	a := []any{}
	if d.space(); d.at(']') {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		switch more, ok := d.next(']'); {
		case !ok:
			return nil, false
		case !more:
			return a, true
		}
	}
}

// next reads what follows an item of an object or array that end ends: a
// comma (more is true) or end; ok is false for anything else.
func (d *decoder) next(end byte) (more, ok bool) {
	if d.space(); d.i >= len(d.src) {
		return false, false
	}
	d.i++
	switch d.src[d.i-1] {
	case ',':
		return true, true
	case end:
		return false, true
	}
	return false, false
}

// str reads a string, the reader at its opening quote.
func (d *decoder) str() (string, bool) {
	d.i++
	from := d.i
	for d.i < len(d.src) {
		switch c := d.src[d.i]; {
		case c == '"':
			d.i++
			return d.src[from : d.i-1], true
		case c == '\\':
			return d.escaped([]byte(d.src[from:d.i]))
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			d.i++
		default:
			if !d.utf8() {
				return "", false
			}
		}
	}
	return "", false
}

// utf8 steps over one multi-byte character; false when it is not UTF-8
// (encoding/json would put U+FFFD in its place).
func (d *decoder) utf8() bool {
	r, size := utf8.DecodeRuneInString(d.src[d.i:])
	d.i += size
	return r != utf8.RuneError || size > 1
}

// escaped reads the rest of a string that has escapes, out holding what
// came before the first.
func (d *decoder) escaped(out []byte) (string, bool) {
	for d.i < len(d.src) {
		c := d.src[d.i]
		switch {
		case c == '"':
			d.i++
			return string(out), true
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			from := d.i
			if !d.utf8() {
				return "", false
			}
			out = append(out, d.src[from:d.i]...)
			continue
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.src) {
			return "", false
		}
		e := d.src[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if d.i+4 > len(d.src) {
				return "", false
			}
			v, err := strconv.ParseUint(d.src[d.i:d.i+4], 16, 16)
			if err != nil || utf16.IsSurrogate(rune(v)) {
				return "", false
			}
			d.i += 4
			out = utf8.AppendRune(out, rune(v))
		default:
			return "", false
		}
	}
	return "", false
}

// word reads true, false or null.
func (d *decoder) word(w string) bool {
	if len(d.src)-d.i < len(w) || d.src[d.i:d.i+len(w)] != w {
		return false
	}
	d.i += len(w)
	return true
}

// number reads a number as JSON writes one, kept as written.
func (d *decoder) number() (any, bool) {
	from := d.i
	if d.at('-') {
		d.i++
	}
	switch {
	case d.at('0'):
		d.i++
	case d.digits() == 0:
		return nil, false
	}
	if d.at('.') {
		d.i++
		if d.digits() == 0 {
			return nil, false
		}
	}
	if d.at('e') || d.at('E') {
		d.i++
		if d.at('+') || d.at('-') {
			d.i++
		}
		if d.digits() == 0 {
			return nil, false
		}
	}
	return json.Number(d.src[from:d.i]), true
}

func (d *decoder) digits() int {
	from := d.i
	for d.i < len(d.src) && d.src[d.i] >= '0' && d.src[d.i] <= '9' {
		d.i++
	}
	return d.i - from
}
