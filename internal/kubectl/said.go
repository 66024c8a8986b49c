package kubectl

import (
	"io"
	"strings"
)

// said is what the plugin says on stderr besides its error: notes and
// warnings, a line each. They are written after the output, and only when
// there is one: a run that fails writes nothing to stdout, and says only
// why, nothing about what it would have written. Each line is said once
// however many templates share it: one fact, one line.
type said struct {
	lines []string
	seen  map[string]bool
}

// Write takes whole lines, as fmt.Fprintf and fmt.Fprintln write them.
func (s *said) Write(p []byte) (int, error) {
	for line := range strings.Lines(string(p)) {
		if !s.seen[line] {
			s.seen[line] = true
			s.lines = append(s.lines, line)
		}
	}
	return len(p), nil
}

// writeTo writes what was said to stderr.
func (s *said) writeTo(stderr io.Writer) {
	io.WriteString(stderr, strings.Join(s.lines, ""))
}
