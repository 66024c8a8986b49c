package kubectl

import (
	"encoding/json"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/job-signal/job-signal/inject"
)

// style is how a document writes what the editor adds to it.
type style struct {
	json   bool
	step   int    // indentation of one level
	seqIn  bool   // YAML: block sequences indented under their key
	nl     string // "\n" or "\r\n"
	single bool   // JSON on one line
	tabs   bool   // JSON indented with tabs
}

// contents lists a value's members in order (mapKind) or its items
// (seqKind); a scalar has none.
func contents(v any) (keys []string, vals []any, k kind) {
	switch v := v.(type) {
	case inject.Fields:
		for _, f := range v {
			keys, vals = append(keys, f.Key), append(vals, f.Value)
		}
		return keys, vals, mapKind
	case map[string]any:
		return sortedMembers(v)
	case map[string]string:
		return sortedMembers(v)
	case []any:
		return nil, v, seqKind
	case []string:
		items := make([]any, len(v)) // not vals, or the appends above would not start on the stack
		for i, s := range v {
			items[i] = s
		}
		return nil, items, seqKind
	}
	return nil, nil, scalarKind
}

func sortedMembers[V any](m map[string]V) (keys []string, vals []any, _ kind) {
	keys = slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		vals = append(vals, m[k])
	}
	return keys, vals, mapKind
}

// flow writes a value in flow style (all of JSON): on one line, or in
// pretty JSON its lines after the first at indent and steps.
func (s style) flow(v any, indent int) string {
	text, _ := s.flowIn(v, indent, math.MaxInt)
	return text
}

// flowIn is flow, given up (false) once longer than room bytes.
func (s style) flowIn(v any, indent, room int) (string, bool) {
	keys, vals, k := contents(v)
	if k == scalarKind {
		text := s.scalarValue(v)
		return text, len(text) <= room
	}
	brackets := "[]"
	if k == mapKind {
		brackets = "{}"
	}
	if len(vals) == 0 {
		return brackets, true
	}
	open, sep, end := "", ", ", ""
	if s.json && !s.single {
		open, end = s.nl+s.pad(indent+s.step), s.nl+s.pad(indent)
		sep = "," + open
	}
	parts := make([]string, len(vals))
	used := len(open) + len(end) + 2 // and the parts, with a separator each
	for i, val := range vals {
		prefix := ""
		if k == mapKind {
			prefix = s.key(keys[i]) + ": "
		}
		text, ok := s.flowIn(val, indent+s.step, room-used-len(prefix))
		parts[i] = prefix + text
		if used += len(parts[i]) + len(sep); !ok || used-len(sep) > room {
			return "", false
		}
	}
	return brackets[:1] + open + strings.Join(parts, sep) + end + brackets[1:], true
}

// oneLine is v in YAML flow, and whether it is short enough for that.
func (s style) oneLine(v any) (string, bool) {
	room := math.MaxInt
	switch _, _, k := contents(v); k {
	case mapKind:
		room = 80
	case seqKind:
		room = 100
	}
	return s.flowIn(v, 0, room)
}

// block writes a YAML value after "key:" at column indent, or after a
// list item's '-' there (dash): on the same line, or on lines below; a
// mapping after a '-' from that line down, members in line.
func (s style) block(v any, indent int, dash bool) string {
	if str, ok := v.(string); ok {
		return " " + s.scalar(str, false)
	}
	if line, fits := s.oneLine(v); fits {
		return " " + line
	}
	if !dash {
		return s.below(v, indent)
	}
	if _, _, k := contents(v); k != mapKind {
		return s.below(v, indent)
	}
	col := indent + 2
	return " " + strings.TrimPrefix(s.below(v, col-s.step), s.nl+s.pad(col))
}

// below writes a collection on the lines below its key at column indent.
func (s style) below(v any, indent int) string {
	var b strings.Builder
	keys, vals, k := contents(v)
	if k == mapKind {
		pad := s.pad(indent + s.step)
		for i := range keys {
			b.WriteString(s.nl + pad + s.key(keys[i]) + ":" + s.block(vals[i], indent+s.step, false))
		}
		return b.String()
	}
	dashIndent := indent
	if s.seqIn {
		dashIndent += s.step
	}
	for _, it := range vals {
		b.WriteString(s.nl + s.pad(dashIndent) + "-" + s.block(it, dashIndent, true))
	}
	return b.String()
}

func (s style) scalarValue(v any) string {
	switch v := v.(type) {
	case string:
		return s.scalar(v, true)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	b, _ := json.Marshal(v) // null, booleans, integers and json.Number as they are
	return string(b)
}

// key writes a mapping key: plain where it can be.
func (s style) key(k string) string {
	if !s.json && safePlain(k, true) {
		return k
	}
	return s.scalar(k, true)
}

// unescapeHTML undoes json.Marshal's escapes of <, > and &, which a
// hand-written JSON file does not have.
var unescapeHTML = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")

// scalar writes a string: YAML plain when every YAML 1.1 and 1.2 reader
// takes it as that string, else quoted (single quotes without escapes).
func (s style) scalar(v string, inFlow bool) string {
	if s.json {
		b, _ := json.Marshal(v)
		return unescapeHTML.Replace(string(b))
	}
	switch {
	case safePlain(v, inFlow):
		return v
	case printable(v) && (!strings.Contains(v, "'") || strings.Contains(v, `"`)):
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return strconv.Quote(v) // Go's escapes are YAML's; the string is valid UTF-8
}

// numberLike: what a YAML 1.1 or 1.2 reader may take for a number or a
// timestamp (1e3, 0x10, 0o17, 1_000, 1:20, 2001-12-14, .5, -1).
var numberLike = regexp.MustCompile(`^[-+.]?[0-9][0-9a-fA-FxXoObB_.:+-]*$|^[-+]?\.(inf|Inf|INF|nan|NaN|NAN)$`)

// plainWord: letters, digits and _/$.- to start, then =@%+: too.
func plainWord(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_/$.-", c) >= 0 ||
			i > 0 && strings.IndexByte("=@%+:", c) >= 0
		if !ok {
			return false
		}
	}
	return v != ""
}

// implicit are words YAML 1.1 readers take as booleans or null.
var implicit = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true, "true": true, "false": true, "null": true, "~": true}

// safePlain: a string every YAML reader (1.1, as kubectl's, and 1.2)
// takes as itself when written plain.
func safePlain(v string, inFlow bool) bool {
	switch {
	case !plainWord(v), implicit[strings.ToLower(v)], strings.IndexByte("+-.0123456789", v[0]) >= 0 && numberLike.MatchString(v):
		return false
	case strings.Contains(v, ":") && (inFlow || strings.HasSuffix(v, ":")):
		return false
	}
	return !strings.HasPrefix(v, "-") || len(v) > 1 && (v[1] == '-' || unicode.IsLetter(rune(v[1])))
}

func printable(v string) bool {
	for _, r := range v {
		if !unicode.IsPrint(r) || r == '\u2028' || r == '\u2029' || r == '\ufeff' {
			return false
		}
	}
	return true
}
