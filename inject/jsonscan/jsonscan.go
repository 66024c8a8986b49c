// Package jsonscan reads JSON a token at a time from a stream (long because
// the grammar, its fast paths and its bounds belong together): the
// product's one JSON reader where encoding/json's decoding would hold or
// build more than is needed, or cost more than it must. The webhook reads
// a busy, slow or oversized admission review with it (a sketch of the
// Pod, never the whole), cuts a Pod's managedFields before decoding, and
// inject finds the bytes of a template's spec and decodes a template
// (Decode, value.go: the same grammar over bytes in memory). The plugin's
// editor has its own parser: it keeps every byte of the source and where
// each value is, which this one never does.
package jsonscan

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxShort bounds a string Str returns; a longer one is read through and
// returned as "" (no name or value its callers look for is that long).
const MaxShort = 256

// ErrJSON: the input is not JSON, or ends early.
var ErrJSON = errors.New("not a whole JSON document")

// Scanner reads JSON a token at a time, holding no more than its buffer
// and one short string. Its first error stops it for good.
type Scanner struct {
	in  *counter
	r   *bufio.Reader
	err error
}

// New is a Scanner of r with a buffer of size bytes.
func New(r io.Reader, size int) *Scanner {
	in := &counter{r: r}
	return &Scanner{in: in, r: bufio.NewReaderSize(in, size)}
}

// counter counts the bytes read from r.
type counter struct {
	r io.Reader
	n int
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// Offset is how many bytes of the input the scanner has read: where the
// next token (or the white space before it) starts.
func (s *Scanner) Offset() int { return s.in.n - s.r.Buffered() }

// Err is the scanner's first error: ErrJSON, or what a callback returned.
func (s *Scanner) Err() error { return s.err }

// Fail stops the scanner with err, unless it has stopped already.
func (s *Scanner) Fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// Peek is the next byte after white space, not consumed; 0 at the end or
// after an error.
func (s *Scanner) Peek() byte {
	for s.err == nil {
		buf := s.buffered()
		if buf == nil {
			s.Fail(ErrJSON)
			return 0
		}
		i := 0
		for i < len(buf) && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n') {
			i++
		}
		s.r.Discard(i)
		if i < len(buf) {
			return buf[i]
		}
	}
	return 0
}

// buffered is what the reader holds, reading more when it holds nothing;
// nil at the end or on an error. Runs of bytes are looked at there, not
// one call per byte: a request can be megabytes.
func (s *Scanner) buffered() []byte {
	if _, err := s.r.Peek(1); err != nil {
		return nil
	}
	buf, _ := s.r.Peek(s.r.Buffered())
	return buf
}

func (s *Scanner) expect(want byte) bool {
	if s.Peek() != want {
		s.Fail(ErrJSON)
		return false
	}
	s.r.ReadByte()
	return true
}

// Object reads an object, calling f after each key with the scanner at
// its value, which f must read. null is an empty object.
func (s *Scanner) Object(f func(key string) error) error {
	return s.list('{', '}', func() error {
		key := s.Str()
		if !s.expect(':') {
			return s.err
		}
		return f(key)
	})
}

// Array reads an array, calling f with the scanner at each element, which
// f must read. null is an empty array.
func (s *Scanner) Array(f func() error) error { return s.list('[', ']', f) }

// list reads what open and end enclose, item by item, separated by
// commas; null is an empty one.
func (s *Scanner) list(open, end byte, item func() error) error {
	if s.null() {
		return s.err
	}
	if !s.expect(open) {
		return s.err
	}
	if s.Peek() == end {
		s.r.ReadByte()
		return s.err
	}
	for s.err == nil {
		if err := item(); err != nil {
			s.Fail(err)
			break
		}
		switch s.Peek() {
		case ',':
			s.r.ReadByte()
		case end:
			s.r.ReadByte()
			return s.err
		default:
			s.Fail(ErrJSON)
		}
	}
	return s.err
}

// null reads a null if one comes next.
func (s *Scanner) null() bool {
	if s.Peek() != 'n' {
		return false
	}
	s.literal()
	return true
}

// literal reads a number, true, false or null, without checking it.
func (s *Scanner) literal() {
	for n := 0; s.err == nil; {
		buf := s.buffered()
		if buf == nil {
			if _, err := s.r.Peek(1); n == 0 || err != io.EOF {
				s.Fail(ErrJSON)
			}
			return // a document that is one literal
		}
		for i, b := range buf {
			switch b {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				s.r.Discard(i)
				if n+i == 0 {
					s.Fail(ErrJSON)
				}
				return
			case '{', '[', '"', ':':
				s.Fail(ErrJSON)
				return
			}
		}
		s.r.Discard(len(buf))
		n += len(buf)
	}
}

// Skip reads one value of any kind and size, keeping nothing. An object
// or array is looked at as runs of bytes in the buffer, its strings and
// brackets told apart, not token by token: managedFields alone is
// hundreds of them.
func (s *Scanner) Skip() {
	switch s.Peek() {
	case '{', '[':
	case '"':
		s.Str()
		return
	default:
		s.literal()
		return
	}
	depth, inString, escaped := 0, false, false
	for s.err == nil {
		buf := s.buffered()
		if buf == nil {
			s.Fail(ErrJSON)
			return
		}
		for i := 0; i < len(buf); i++ {
			if inString {
				if escaped {
					escaped = false
					continue
				}
				for i < len(buf) && plain[buf[i]] {
					i++
				}
				switch {
				case i == len(buf):
				case buf[i] == '\\':
					escaped = true
				case buf[i] == '"':
					inString = false
				default: // a control character
					s.Fail(ErrJSON)
					return
				}
				continue
			}
			for i < len(buf) && !structural[buf[i]] {
				i++
			}
			if i == len(buf) {
				break
			}
			switch buf[i] {
			case '"':
				inString = true
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					s.r.Discard(i + 1)
					return
				}
			}
		}
		s.r.Discard(len(buf))
	}
}

// Str reads a string and returns it decoded, or "" when it is longer than
// MaxShort bytes, or null.
func (s *Scanner) Str() string {
	if s.null() || !s.expect('"') {
		return ""
	}
	// Most strings are short and plain ASCII, whole in the buffer: read
	// there, in one step.
	if buf := s.buffered(); buf != nil {
		i := 0
		for i < len(buf) && i <= MaxShort && buf[i] < utf8.RuneSelf && plain[buf[i]] {
			i++
		}
		if i < len(buf) && i <= MaxShort && buf[i] == '"' {
			str := string(buf[:i])
			s.r.Discard(i + 1)
			return str
		}
	}
	var out []byte
	long := false
	add := func(r rune) {
		if long {
			return
		}
		out = utf8.AppendRune(out, r)
		if len(out) > MaxShort {
			long, out = true, nil
		}
	}
	for s.err == nil {
		if long {
			s.skipPlain()
		}
		b, err := s.r.ReadByte()
		switch {
		case err != nil || b < 0x20:
			s.Fail(ErrJSON)
		case b == '"':
			if long {
				return ""
			}
			return string(out)
		case b == '\\':
			add(s.escape())
		case b < utf8.RuneSelf:
			add(rune(b))
		default:
			s.r.UnreadByte()
			r, _, _ := s.r.ReadRune()
			add(r)
		}
	}
	return ""
}

// skipPlain discards the bytes of a string up to its next quote,
// backslash or control character, which it leaves.
func (s *Scanner) skipPlain() {
	for {
		buf := s.buffered()
		i := 0
		for i < len(buf) && plain[buf[i]] {
			i++
		}
		s.r.Discard(i)
		if i < len(buf) || buf == nil {
			return
		}
	}
}

// plain is whether a byte inside a string is itself: not its end, an
// escape or a control character (which JSON does not allow there).
var plain = func() (t [256]bool) {
	for b := range t {
		t[b] = b >= 0x20 && b != '"' && b != '\\'
	}
	return t
}()

// structural is whether a byte outside strings is one Skip looks at: a
// quote or a bracket.
var structural = func() (t [256]bool) {
	for _, b := range []byte(`"{}[]`) {
		t[b] = true
	}
	return t
}()

// escape reads what follows a backslash in a string.
func (s *Scanner) escape() rune {
	b, err := s.r.ReadByte()
	if err != nil {
		s.Fail(ErrJSON)
		return utf8.RuneError
	}
	switch b {
	case '"', '\\', '/':
		return rune(b)
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'u':
		r := s.hex4()
		if !utf16.IsSurrogate(r) {
			return r
		}
		// A surrogate pairs with the escape that follows only if the two
		// make a rune; otherwise it stands for U+FFFD and what follows is
		// read on its own, as encoding/json reads it.
		if next, _ := s.r.Peek(6); len(next) == 6 && string(next[:2]) == `\u` {
			if low, err := strconv.ParseUint(string(next[2:]), 16, 16); err == nil {
				if pair := utf16.DecodeRune(r, rune(low)); pair != utf8.RuneError {
					s.r.Discard(6)
					return pair
				}
			}
		}
		return utf8.RuneError
	}
	s.Fail(ErrJSON)
	return utf8.RuneError
}

func (s *Scanner) hex4() rune {
	var h [4]byte
	if _, err := io.ReadFull(s.r, h[:]); err != nil {
		s.Fail(ErrJSON)
		return utf8.RuneError
	}
	v, err := strconv.ParseUint(string(h[:]), 16, 16)
	if err != nil {
		s.Fail(ErrJSON)
		return utf8.RuneError
	}
	return rune(v)
}
