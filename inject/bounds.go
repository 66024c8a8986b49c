package inject

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The bounds of what the front ends write or print, the same for the
// webhook and the plugin: a Pod they hand over is one the API server
// accepts, and a message that carries text from outside (a registry's
// error page, the API server's answer) is one short line.

// MaxReason bounds a message from outside as either front end shows it: a
// reason written into an object (annotation, warning, the message of a
// denial, which the Job controller copies into an event), a line the
// plugin prints.
const MaxReason = 1024

// OneLine is s as one line of printable text of at most max bytes:
// control characters and runs of white space become one space, and a
// longer text is cut at a character boundary, ending with "...".
func OneLine(s string, max int) string {
	var b strings.Builder
	space := false
	for i, r := range s {
		if i > 4*max { // enough to fill max, whatever is dropped
			break
		}
		if unicode.IsSpace(r) || !unicode.IsPrint(r) || r == utf8.RuneError {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		if b.Len() > max {
			break
		}
	}
	out := b.String()
	if len(out) <= max {
		return out
	}
	cut := max - len("...")
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	return out[:cut] + "..."
}

// TotalAnnotationLimit is the API server's bound on a Pod's annotations:
// the lengths of all keys and values together.
const TotalAnnotationLimit = 256 << 10

// AnnotationsSize is what the API server counts against
// TotalAnnotationLimit.
func AnnotationsSize(annotations map[string]string) int {
	n := 0
	for k, v := range annotations {
		n += len(k) + len(v)
	}
	return n
}

// CheckAnnotations refuses ops (Inject's, on a template or Pod whose
// annotations are before) that would take its annotations over the API
// server's limit: the Pod would be refused.
func CheckAnnotations(before map[string]string, ops []Op) error {
	if size := AnnotationsSize(AnnotationsAfter(before, ops)); size > TotalAnnotationLimit {
		return fmt.Errorf("with job-signal's record (%s) the Pod's annotations would take %d bytes, over the API server's limit of %d",
			AnnotationInjected, size, TotalAnnotationLimit)
	}
	return nil
}

// AnnotationsAfter is the annotations once ops are applied. Of Inject's
// ops only these touch them: adding or removing one annotation (its
// record), and setting metadata, or its annotations, whole.
func AnnotationsAfter(before map[string]string, ops []Op) map[string]string {
	out := maps.Clone(before)
	for _, o := range ops {
		key, one := strings.CutPrefix(o.Path, "/metadata/annotations/")
		switch {
		case one && o.Op == "remove":
			delete(out, unescape(key))
		case one:
			if out == nil {
				out = map[string]string{}
			}
			// As the API server reads it from the patch: a string of valid
			// UTF-8 as it is, anything else through JSON.
			v, ok := o.Value.(string)
			if !ok || !utf8.ValidString(v) {
				v = ""
				b, _ := json.Marshal(o.Value)
				json.Unmarshal(b, &v)
			}
			out[unescape(key)] = v
		case o.Path == "/metadata" || o.Path == "/metadata/annotations":
			var whole struct {
				Annotations map[string]string `json:"annotations"`
			}
			b, _ := json.Marshal(o.Value)
			if o.Path == "/metadata" {
				json.Unmarshal(b, &whole)
			} else {
				json.Unmarshal(b, &whole.Annotations)
			}
			out = whole.Annotations // nil for a remove
		}
	}
	return out
}
