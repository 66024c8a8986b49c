package signalfs

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits that keep a hostile or corrupted marker from costing memory or
// producing surprising values. A real marker is a few hundred bytes.
const (
	// MaxMarkerSize is the largest marker file a reader accepts.
	MaxMarkerSize = 4096
	maxKeyLen     = 32
	maxValueLen   = 1024
)

// ErrMalformed is wrapped by every error that reports marker content that
// does not follow the protocol.
var ErrMalformed = errors.New("malformed marker")

// ErrNewerProtocol is wrapped when a marker was written by a newer protocol
// version than this binary reads.
var ErrNewerProtocol = errors.New("marker written by a newer protocol version")

// record is one marker file's content: a kind and its key/value fields, in
// the order they were added (so encoded files are stable and readable).
type record struct {
	kind    string
	version int
	keys    []string
	values  map[string]string
	// err is the first value set that cannot be stored, or the first
	// field read that is missing or malformed.
	err error
}

func newRecord(kind string) *record {
	return &record{kind: kind, version: ProtocolVersion, values: map[string]string{}}
}

// set adds a field; empty values are left out of the file. A value that
// cannot be stored as it is (too long, a control character) makes encode
// fail: structured values (names, numbers) are never cut short, since a
// reader would then reject the whole file.
func (r *record) set(key, value string) {
	if value == "" {
		return
	}
	if err := checkValue(value); err != nil {
		r.fail(fmt.Errorf("%s: %w", key, err))
	}
	if _, dup := r.values[key]; !dup {
		r.keys = append(r.keys, key)
	}
	r.values[key] = value
}

// setText adds free text (a message, an error from elsewhere), made safe
// to store: one line, printable, cut to the length limit.
func (r *record) setText(key, value string) { r.set(key, sanitizeValue(value)) }

func (r *record) encode() ([]byte, error) {
	if r.err != nil {
		return nil, fmt.Errorf("encode %s state: %w", r.kind, r.err)
	}
	b := make([]byte, 0, 512)
	b = append(b, magic+" v"...)
	b = strconv.AppendInt(b, int64(r.version), 10)
	b = append(append(append(b, ' '), r.kind...), '\n')
	for _, k := range r.keys {
		b = append(append(append(append(b, k...), '='), r.values[k]...), '\n')
	}
	if len(b) > MaxMarkerSize {
		return nil, fmt.Errorf("encode %s state: %d bytes, more than the %d allowed", r.kind, len(b), MaxMarkerSize)
	}
	return b, nil
}

// sanitizeValue makes any string safe to store as a value: one line,
// printable, bounded. Error messages from the outside world go through here.
func sanitizeValue(s string) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxValueLen {
		cut := maxValueLen - 3
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// parseRecord parses a marker file. It never panics; every rejection wraps
// ErrMalformed (or ErrNewerProtocol) and says what is wrong.
func parseRecord(data []byte, wantKind string) (*record, error) {
	if len(data) > MaxMarkerSize {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d allowed", ErrMalformed, len(data), MaxMarkerSize)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty file", ErrMalformed)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not UTF-8", ErrMalformed)
	}
	if data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("%w: truncated (no final newline)", ErrMalformed)
	}
	lines := strings.Split(string(data[:len(data)-1]), "\n")
	r, err := parseHeader(lines[0])
	if err != nil {
		return nil, err
	}
	if r.kind != wantKind {
		return nil, fmt.Errorf("%w: kind %q, want %q", ErrMalformed, r.kind, wantKind)
	}
	for i, line := range lines[1:] {
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%w: line %d: want key=value, got %q", ErrMalformed, i+2, clip(line))
		}
		if err := checkKey(key); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrMalformed, i+2, err)
		}
		if err := checkValue(value); err != nil {
			return nil, fmt.Errorf("%w: line %d (%s): %v", ErrMalformed, i+2, key, err)
		}
		if _, dup := r.values[key]; dup {
			return nil, fmt.Errorf("%w: line %d: key %q repeated", ErrMalformed, i+2, key)
		}
		r.keys = append(r.keys, key)
		r.values[key] = value
	}
	return r, nil
}

func parseHeader(line string) (*record, error) {
	fields := strings.Split(line, " ")
	if len(fields) != 3 || fields[0] != magic {
		return nil, fmt.Errorf("%w: first line %q is not %q", ErrMalformed, clip(line), magic+" v1 KIND")
	}
	v, ok := strings.CutPrefix(fields[1], "v")
	version, err := strconv.Atoi(v)
	if !ok || err != nil || version < 1 || v != strconv.Itoa(version) {
		return nil, fmt.Errorf("%w: bad protocol version %q", ErrMalformed, clip(fields[1]))
	}
	if version > ProtocolVersion {
		return nil, fmt.Errorf("%w: v%d, this binary reads up to v%d (upgrade job-signal and sidecar-watch together)", ErrNewerProtocol, version, ProtocolVersion)
	}
	if err := checkKey(fields[2]); err != nil {
		return nil, fmt.Errorf("%w: bad kind: %v", ErrMalformed, err)
	}
	return &record{kind: fields[2], version: version, values: map[string]string{}}, nil
}

func checkKey(key string) error {
	if key == "" || len(key) > maxKeyLen {
		return fmt.Errorf("key %q: want 1 to %d characters", clip(key), maxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c == '-' || i > 0 && c >= '0' && c <= '9') {
			return fmt.Errorf("key %q: want lower-case letters, digits and '-'", clip(key))
		}
	}
	return nil
}

func checkValue(value string) error {
	if len(value) > maxValueLen {
		return fmt.Errorf("value longer than %d bytes", maxValueLen)
	}
	for _, r := range value {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("control character %q in value", r)
		}
	}
	return nil
}

// clip shortens a string for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Typed accessors. Each returns the zero value for a missing or bad field;
// the first bad field's error, which names the key, is kept in err, so a
// parser reads every field and reports the first problem.

// fail keeps err if it is the first.
func (r *record) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *record) str(key string, required bool) string {
	v := r.values[key]
	if v == "" && required {
		r.fail(fmt.Errorf("%w: %s marker lacks %q", ErrMalformed, r.kind, key))
	}
	return v
}

func (r *record) integer(key string, required bool, min, max int) int {
	v := r.str(key, required)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		r.fail(fmt.Errorf("%w: %s=%q: want an integer from %d to %d", ErrMalformed, key, clip(v), min, max))
		return 0
	}
	return n
}

func (r *record) boolean(key string) bool {
	switch v := r.values[key]; v {
	case "", "false":
	case "true":
		return true
	default:
		r.fail(fmt.Errorf("%w: %s=%q: want true or false", ErrMalformed, key, clip(v)))
	}
	return false
}

func (r *record) oneOf(key string, required bool, allowed ...string) string {
	v := r.str(key, required)
	if v == "" || slices.Contains(allowed, v) {
		return v
	}
	r.fail(fmt.Errorf("%w: %s=%q: want one of %s", ErrMalformed, key, clip(v), strings.Join(allowed, ", ")))
	return ""
}

func (r *record) names(key string) []string {
	v := r.values[key]
	if v == "" {
		return nil
	}
	list := strings.Split(v, ",")
	for _, n := range list {
		if err := ValidName(n); err != nil {
			r.fail(fmt.Errorf("%w: %s: %v", ErrMalformed, key, err))
			return nil
		}
	}
	return list
}

func (r *record) time(key string) time.Time {
	v := r.values[key]
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		r.fail(fmt.Errorf("%w: %s=%q: want an RFC 3339 time", ErrMalformed, key, clip(v)))
	}
	return t
}
