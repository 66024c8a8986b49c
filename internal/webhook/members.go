package webhook

import (
	"bytes"
	"encoding/json"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// setMember sets v, one of requestMembers' or the review's, from span (a
// value the scanner skipped, unchecked) as encoding/json.Unmarshal does.
// The shapes the API server sends for the request's small members (plain
// strings, a bool, two group-version-kinds and -resources, the options'
// raw object) are set here; anything else, and every other type, goes to
// encoding/json, whose answer and error stand. Decoding them one by one
// with encoding/json was most of reading a review besides its Pod.
func setMember(span []byte, v any) error {
	switch p := v.(type) {
	case *string:
		if s, ok := plainString(span); ok {
			*p = s
			return nil
		}
	case *types.UID:
		if s, ok := plainString(span); ok {
			*p = types.UID(s)
			return nil
		}
	case *admissionv1.Operation:
		if s, ok := plainString(span); ok {
			*p = admissionv1.Operation(s)
			return nil
		}
	case **bool:
		switch string(span) {
		case "true", "false":
			b := span[0] == 't'
			*p = &b
			return nil
		case "null":
			*p = nil
			return nil
		}
	case *runtime.RawExtension:
		if json.Valid(span) { // RawExtension's UnmarshalJSON, given the value
			if !bytes.Equal(span, []byte("null")) {
				p.Raw = append(p.Raw[:0], span...)
			}
			return nil
		}
	case *metav1.GroupVersionKind:
		if flatStrings(span, [3]string{"group", "version", "kind"}, [3]*string{&p.Group, &p.Version, &p.Kind}) {
			return nil
		}
	case **metav1.GroupVersionKind:
		if set, ok := maybeNull(span, p); ok {
			if set != nil && !flatStrings(span, [3]string{"group", "version", "kind"}, [3]*string{&set.Group, &set.Version, &set.Kind}) {
				break
			}
			*p = set
			return nil
		}
	case *metav1.GroupVersionResource:
		if flatStrings(span, [3]string{"group", "version", "resource"}, [3]*string{&p.Group, &p.Version, &p.Resource}) {
			return nil
		}
	case **metav1.GroupVersionResource:
		if set, ok := maybeNull(span, p); ok {
			if set != nil && !flatStrings(span, [3]string{"group", "version", "resource"}, [3]*string{&set.Group, &set.Version, &set.Resource}) {
				break
			}
			*p = set
			return nil
		}
	}
	return json.Unmarshal(span, v)
}

// plainString is the string span holds when it is one of printable ASCII
// without escapes, which encoding/json decodes to its bytes as they are.
func plainString(span []byte) (string, bool) {
	if len(span) < 2 || span[0] != '"' || span[len(span)-1] != '"' {
		return "", false
	}
	in := span[1 : len(span)-1]
	for _, b := range in {
		if b < 0x20 || b >= 0x80 || b == '"' || b == '\\' {
			return "", false
		}
	}
	return string(in), true
}

// maybeNull is what encoding/json decodes span into when *p is a pointer
// to a struct: nil for null, else a copy of *p's struct (a new one when
// *p is nil) to decode into, then set as *p. encoding/json would decode
// into the struct *p points to; the value is the same, the pointer new,
// which no caller can tell: scanReview's requests are new, and a member
// given twice goes to encoding/json. ok is false for a value that is
// neither null nor an object.
func maybeNull[T any](span []byte, p **T) (set *T, ok bool) {
	switch {
	case string(span) == "null":
		return nil, true
	case len(span) == 0 || span[0] != '{':
		return nil, false
	case *p != nil:
		v := **p
		return &v, true
	}
	return new(T), true
}

// flatStrings sets the fields named names from span when it is an object
// whose every key is exactly one of names and every value a plain string,
// in the order given (so a key twice ends with its last value, as
// encoding/json's); otherwise it sets nothing and is false.
func flatStrings(span []byte, names [3]string, fields [3]*string) bool {
	type set struct {
		to    *string
		value string
	}
	var sets [4]set
	n := 0
	i := 0
	space := func() {
		for i < len(span) && (span[i] == ' ' || span[i] == '\t' || span[i] == '\n' || span[i] == '\r') {
			i++
		}
	}
	str := func() (string, bool) {
		if i >= len(span) || span[i] != '"' {
			return "", false
		}
		end := bytes.IndexByte(span[i+1:], '"')
		if end < 0 {
			return "", false
		}
		s, ok := plainString(span[i : i+end+2])
		i += end + 2
		return s, ok
	}
	if space(); i >= len(span) || span[i] != '{' {
		return false
	}
	i++
	for first := true; ; first = false {
		space()
		if i < len(span) && span[i] == '}' && first {
			i++
			break
		}
		key, ok := str()
		var to *string
		for f, name := range names {
			if key == name {
				to = fields[f]
			}
		}
		if !ok || to == nil || n == len(sets) {
			return false
		}
		if space(); i >= len(span) || span[i] != ':' {
			return false
		}
		i++
		space()
		value, ok := str()
		if !ok {
			return false
		}
		sets[n], n = set{to, value}, n+1
		if space(); i < len(span) && span[i] == ',' {
			i++
			continue
		}
		if i < len(span) && span[i] == '}' {
			i++
			break
		}
		return false
	}
	if space(); i != len(span) {
		return false
	}
	for _, s := range sets[:n] {
		*s.to = s.value
	}
	return true
}
