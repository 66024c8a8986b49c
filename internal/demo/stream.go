package demo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"
)

// stream is every line the Pod's containers write, and the demo's own
// notes, in the order they were written, each stamped with when. Every
// container's stdout and stderr and the demo's notes go into one pipe, and
// one reader reads it:
//
//   - the kernel keeps a pipe's writes in the order they were made, and a
//     write of at most PIPE_BUF bytes (4096 on Linux) whole; each line is
//     one write (slog writes a record at once, fmt.Println a line at once),
//     so lines never mix, and a line written after another, by whatever
//     process, is read after it;
//   - the one reader stamps each line from one monotonic clock as it reads
//     it, so the stamps grow in the order of the lines, and lag the write
//     only by the reader's own delay;
//   - the note that a container exited is written once wait4 has returned,
//     so after every line the container wrote.
//
// Reading each container's pipe apart, even with a stamp per line, orders
// lines by when each reader got to them, not by when they were written.
type stream struct {
	r, w  *os.File
	start time.Time
	out   io.Writer
	end   string // the line that ends the reading
	done  chan struct{}
}

func newStream(out io.Writer) (*stream, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s := &stream{r: r, w: w, start: time.Now(), out: out, done: make(chan struct{}),
		end: fmt.Sprintf("job-signal-demo: end of stream %d.%d", os.Getpid(), time.Now().UnixNano())}
	go s.read()
	return s, nil
}

// note writes the demo's own line into the stream, in its place.
func (s *stream) note(format string, args ...any) {
	fmt.Fprintf(s.w, "demo: "+format+"\n", args...)
}

// close ends the stream after every line written so far has been shown.
// A process still holding the pipe (a daemon the Pod left) does not keep
// the demo waiting: the reading ends at the end marker.
func (s *stream) close() {
	fmt.Fprintln(s.w, s.end)
	<-s.done
	s.w.Close()
	s.r.Close()
}

func (s *stream) read() {
	defer close(s.done)
	sc := bufio.NewScanner(s.r)
	for sc.Scan() {
		at := time.Since(s.start)
		if sc.Text() == s.end {
			return
		}
		who, text := source(sc.Text())
		fmt.Fprintf(s.out, "%+8.3fs  %-6s | %s\n", at.Seconds(), who, text)
	}
}

var (
	// noise is what the demo drops from log lines to keep them short.
	noise     = regexp.MustCompile(`time=\S+ | prog=\S+| sidecar=\S+`)
	sidecarOf = regexp.MustCompile(` sidecar=(\S+)`)
	progOf    = regexp.MustCompile(` prog=(\S+)`)
	ownLine   = regexp.MustCompile(`^([a-z]+): `) // a workload's line, or the demo's
)

// source says which container wrote line, from what it says: the programs
// name themselves in their logs (prog=, sidecar=), and the workloads and the
// demo start their lines with their names. It returns the line to show.
func source(line string) (who, text string) {
	switch {
	case sidecarOf.MatchString(line):
		who = sidecarOf.FindStringSubmatch(line)[1]
	case progOf.MatchString(line):
		who = progOf.FindStringSubmatch(line)[1]
		if who == "job-signal" {
			who = "job"
		}
	case ownLine.MatchString(line):
		who = ownLine.FindStringSubmatch(line)[1]
		if who == "demo" {
			return who, strings.TrimPrefix(line, "demo: ")
		}
		return who, line
	default:
		return "?", line
	}
	return who, noise.ReplaceAllString(line, "")
}
