package inject

import "strings"

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
