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
	lines   []string
	seen    map[string]bool
	partial string // a line written in pieces, until its end
}

// Write takes lines as fmt.Fprintf writes them.
func (s *said) Write(p []byte) (int, error) {
	text := s.partial + string(p)
	s.partial = ""
	for text != "" {
		line, rest, ok := strings.Cut(text, "\n")
		if !ok {
			s.partial = line
			break
		}
		s.add(line)
		text = rest
	}
	return len(p), nil
}

// add keeps a line unless it was said already.
func (s *said) add(line string) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[line] {
		return
	}
	s.seen[line] = true
	s.lines = append(s.lines, line)
}

// writeTo writes what was said to stderr.
func (s *said) writeTo(stderr io.Writer) {
	if s.partial != "" {
		s.add(s.partial)
		s.partial = ""
	}
	for _, line := range s.lines {
		io.WriteString(stderr, line+"\n")
	}
}
