package inject

import (
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
