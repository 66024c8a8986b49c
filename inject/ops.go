package inject

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Op is one change inject decides: an RFC 6902 JSON Patch operation on a
// Pod template (an object with metadata and spec: a Pod, or a Job's
// spec.template). It is the one description of a change that both front
// ends use: the webhook sends the list as a JSON Patch, the plugin applies
// it where the bytes of the manifest are, touching nothing else.
//
// Inject uses add (at a missing or null member, or into a list at an
// index or "-"), remove, replace and move: to rename a member of the same
// object (the pair: command becomes args), and to move a container between
// spec.containers and spec.initContainers (the native form), with RFC
// 6902's meaning: the value is removed from From, then added at Path.
type Op struct {
	Op    string
	Path  string
	From  string // move only
	Value any    // add and replace: nil, string, bool, json.Number, []string, []any, Fields or map[string]any
	// Keep names the place (see record.Text) under which a front end that
	// edits source text keeps the text this op replaces, when it could not
	// write the old value back the same way (see KeepText).
	Keep string
	// Text is the source text of Value (of the key, for a move), kept by
	// such a front end: it writes Text instead of Value when Text has its
	// format's prefix ("yaml:" or "json:").
	Text   string
	layout bool // on the layout's volumes or init container
}

// MarshalJSON writes the operation as RFC 6902 has it.
func (o Op) MarshalJSON() ([]byte, error) {
	switch o.Op {
	case "remove":
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	case "move":
		return json.Marshal(struct {
			Op   string `json:"op"`
			From string `json:"from"`
			Path string `json:"path"`
		}{o.Op, o.From, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}

// Field is one member of an object inject adds, in the order a person
// would write it.
type Field struct {
	Key   string
	Value any
}

// Fields is an object whose members keep their order when written.
type Fields []Field

// MarshalJSON writes the members in order.
func (f Fields) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range f {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(m.Value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal writes JSON without escaping <, > and & (shell commands stay
// readable in the record and in patches).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Patch writes ops as an RFC 6902 JSON Patch document: the bytes
// json.Marshal writes for them (strings HTML-escaped), written into one
// buffer. Going through the ops' MarshalJSON instead would make
// encoding/json check and copy each nested object's bytes again at every
// level, the webhook's largest cost per Pod after decoding it.
func Patch(ops []Op) ([]byte, error) {
	if len(ops) == 0 {
		return []byte("[]"), nil
	}
	b := make([]byte, 0, 4096)
	b = append(b, '[')
	for i, o := range ops {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = o.appendJSON(b); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendJSON appends what MarshalJSON writes, as json.Marshal writes it.
func (o Op) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"op":`...)
	b = AppendString(b, o.Op)
	switch o.Op {
	case "remove":
	case "move":
		b = append(b, `,"from":`...)
		b = AppendString(b, o.From)
	default:
		b = append(b, `,"path":`...)
		b = AppendString(b, o.Path)
		b = append(b, `,"value":`...)
		b, err := appendValue(b, o.Value)
		return append(b, '}'), err
	}
	b = append(b, `,"path":`...)
	b = AppendString(b, o.Path)
	return append(b, '}'), nil
}

// appendValue appends v as json.Marshal writes it: Fields in order, the
// containers inject builds member by member, anything else (strings,
// Kubernetes types) by json.Marshal itself.
func appendValue(b []byte, v any) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case Fields:
		b = append(b, '{')
		for i, m := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, m.Key)
			b = append(b, ':')
			if b, err = appendValue(b, m.Value); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			if b, err = appendValue(b, v[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case string:
		return AppendString(b, v), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case nil:
		return append(b, "null"...), nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}

// AppendString appends s as json.Marshal writes a string: as it is
// when it holds nothing json.Marshal escapes (most names and paths).
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			j, _ := json.Marshal(s) // a string always marshals
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func index(i int) string { return strconv.Itoa(i) }

// Pointer joins path tokens into a JSON Pointer (RFC 6901).
func Pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// Tokens splits a JSON Pointer into its tokens.
func Tokens(pointer string) []string {
	if pointer == "" {
		return nil
	}
	parts := strings.Split(pointer[1:], "/")
	for i, p := range parts {
		parts[i] = unescape(p)
	}
	return parts
}

// unescape decodes one token of a JSON Pointer (RFC 6901: "~1" is "/",
// "~0" is "~").
func unescape(token string) string {
	if strings.IndexByte(token, '~') < 0 {
		return token
	}
	return pointerDecoder.Replace(token)
}

var pointerDecoder = strings.NewReplacer("~1", "/", "~0", "~")

// Prefixed returns ops with prefix (a JSON Pointer) before every path:
// the plugin applies a template's ops inside a Job (/spec/template).
func Prefixed(prefix string, ops []Op) []Op {
	out := make([]Op, len(ops))
	for i, o := range ops {
		o.Path = prefix + o.Path
		if o.From != "" {
			o.From = prefix + o.From
		}
		out[i] = o
	}
	return out
}
