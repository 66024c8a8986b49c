package webhook

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxShort bounds a string the sketch keeps; a longer one is read through
// and kept as "" (no name or value it looks for is that long).
const maxShort = 256

// errJSON: the input is not JSON, or ends early.
var errJSON = errors.New("not a whole JSON document")

// scan reads JSON a token at a time, holding no more than its buffer and
// one short string. Its first error stops it for good.
type scan struct {
	r   *bufio.Reader
	err error
}

func (s *scan) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// peek is the next byte after white space, not consumed.
func (s *scan) peek() byte {
	for s.err == nil {
		buf := s.buffered()
		if buf == nil {
			s.fail(errJSON)
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
func (s *scan) buffered() []byte {
	if _, err := s.r.Peek(1); err != nil {
		return nil
	}
	buf, _ := s.r.Peek(s.r.Buffered())
	return buf
}

func (s *scan) expect(want byte) bool {
	if s.peek() != want {
		s.fail(errJSON)
		return false
	}
	s.r.ReadByte()
	return true
}

// object reads an object, calling f after each key with the scan at its
// value, which f must read. null is an empty object.
func (s *scan) object(f func(key string) error) error {
	return s.list('{', '}', func() error {
		key := s.str()
		if !s.expect(':') {
			return s.err
		}
		return f(key)
	})
}

// array reads an array, calling f with the scan at each element, which f
// must read. null is an empty array.
func (s *scan) array(f func() error) error { return s.list('[', ']', f) }

// list reads what open and end enclose, item by item, separated by
// commas; null is an empty one.
func (s *scan) list(open, end byte, item func() error) error {
	if s.null() {
		return s.err
	}
	if !s.expect(open) {
		return s.err
	}
	if s.peek() == end {
		s.r.ReadByte()
		return s.err
	}
	for s.err == nil {
		if err := item(); err != nil {
			s.fail(err)
			break
		}
		switch s.peek() {
		case ',':
			s.r.ReadByte()
		case end:
			s.r.ReadByte()
			return s.err
		default:
			s.fail(errJSON)
		}
	}
	return s.err
}

// null reads a null if one comes next.
func (s *scan) null() bool {
	if s.peek() != 'n' {
		return false
	}
	s.literal()
	return true
}

// literal reads a number, true, false or null, without checking it.
func (s *scan) literal() {
	for n := 0; s.err == nil; {
		buf := s.buffered()
		if buf == nil {
			if n == 0 || s.atEnd() != io.EOF {
				s.fail(errJSON)
			}
			return // a document that is one literal
		}
		for i, b := range buf {
			switch b {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				s.r.Discard(i)
				if n+i == 0 {
					s.fail(errJSON)
				}
				return
			case '{', '[', '"', ':':
				s.fail(errJSON)
				return
			}
		}
		s.r.Discard(len(buf))
		n += len(buf)
	}
}

// atEnd is why the reader has nothing more: io.EOF at the end.
func (s *scan) atEnd() error {
	_, err := s.r.Peek(1)
	return err
}

// skip reads one value of any kind and size, keeping nothing. An object
// or array is looked at as runs of bytes in the buffer, its strings and
// brackets told apart, not token by token: managedFields alone is
// hundreds of them.
func (s *scan) skip() {
	switch s.peek() {
	case '{', '[':
	case '"':
		s.str()
		return
	default:
		s.literal()
		return
	}
	depth, inString, escaped := 0, false, false
	for s.err == nil {
		buf := s.buffered()
		if buf == nil {
			s.fail(errJSON)
			return
		}
		for i, b := range buf {
			switch {
			case escaped:
				escaped = false
			case inString:
				switch {
				case b == '\\':
					escaped = true
				case b == '"':
					inString = false
				case b < 0x20:
					s.fail(errJSON)
					return
				}
			case b == '"':
				inString = true
			case b == '{' || b == '[':
				depth++
			case b == '}' || b == ']':
				if depth--; depth == 0 {
					s.r.Discard(i + 1)
					return
				}
			}
		}
		s.r.Discard(len(buf))
	}
}

// str reads a string and returns it decoded, or "" when it is longer than
// maxShort bytes, or null.
func (s *scan) str() string {
	if s.null() || !s.expect('"') {
		return ""
	}
	var out []byte
	long := false
	add := func(r rune) {
		if long {
			return
		}
		out = utf8.AppendRune(out, r)
		if len(out) > maxShort {
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
			s.fail(errJSON)
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
func (s *scan) skipPlain() {
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

// escape reads what follows a backslash in a string.
func (s *scan) escape() rune {
	b, err := s.r.ReadByte()
	if err != nil {
		s.fail(errJSON)
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
		if utf16.IsSurrogate(r) {
			if next, _ := s.r.Peek(2); string(next) == `\u` {
				s.r.Discard(2)
				return utf16.DecodeRune(r, s.hex4())
			}
			return utf8.RuneError
		}
		return r
	}
	s.fail(errJSON)
	return utf8.RuneError
}

func (s *scan) hex4() rune {
	var h [4]byte
	if _, err := io.ReadFull(s.r, h[:]); err != nil {
		s.fail(errJSON)
		return utf8.RuneError
	}
	v, err := strconv.ParseUint(string(h[:]), 16, 16)
	if err != nil {
		s.fail(errJSON)
		return utf8.RuneError
	}
	return rune(v)
}
