package demo

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// stream is every line the Pod's containers write, and the demo's own
// notes, shown in the order things happened: each line is stamped where it
// happened, by the process that wrote it, and the scene's lines are shown
// by those stamps once it is over.
//
//   - job-signal and sidecar-watch log JSON (JOB_SIGNAL_LOG_FORMAT=json),
//     whose "time" has nanoseconds; what they log once its effects may be
//     under way (a signal sent, a command started, the done marker written)
//     carries the time it was done, not the time it was logged;
//   - the workloads and the demo start each line with the time it was
//     written (stampPrefix);
//   - a line with neither (a crash's output) gets the time it was read.
//
// The order of reading is not that of happening: a sidecar-watch that
// signals its sidecar logs it a moment later, and the sidecar may have
// written its answer by then. Every process writes into one pipe, a line
// at a time (one write each, at most PIPE_BUF bytes, so lines never mix),
// and one reader collects them.
type stream struct {
	r, w  *os.File
	start time.Time
	out   io.Writer
	end   string // the line that ends the reading
	done  chan struct{}
	lines []line
}

// line is one line of the stream, as it will be shown.
type line struct {
	at        time.Time
	who, text string
}

// stampPrefix starts a line the demo and its workloads write: the time
// it was written, in nanoseconds since 1970, and a space.
const stampPrefix = "@"

// stamped is text as the demo and its workloads write it: stamped with now.
func stamped(text string) string {
	return stampPrefix + strconv.FormatInt(time.Now().UnixNano(), 10) + " " + text
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

// note writes the demo's own line into the stream, stamped now.
func (s *stream) note(format string, args ...any) {
	fmt.Fprintln(s.w, stamped("demo: "+fmt.Sprintf(format, args...)))
}

// close ends the stream after every line written so far has been read,
// and shows the lines in the order they happened. A process still holding
// the pipe (a daemon the Pod left) does not keep the demo waiting: the
// reading ends at the end marker.
func (s *stream) close() {
	fmt.Fprintln(s.w, s.end)
	<-s.done
	s.w.Close()
	s.r.Close()
	// In the order things happened; lines stamped alike keep the order
	// they were read in.
	slices.SortStableFunc(s.lines, func(a, b line) int { return a.at.Compare(b.at) })
	for _, l := range s.lines {
		fmt.Fprintf(s.out, "%+8.3fs  %-6s | %s\n", l.at.Sub(s.start).Seconds(), l.who, l.text)
	}
}

func (s *stream) read() {
	defer close(s.done)
	sc := bufio.NewScanner(s.r)
	for sc.Scan() {
		if sc.Text() == s.end {
			return
		}
		s.lines = append(s.lines, parseLine(sc.Text(), time.Now()))
	}
}

// parseLine reads one line of the stream: who wrote it, what to show and
// when it happened (read, when the line does not say).
func parseLine(raw string, read time.Time) line {
	if rest, ok := strings.CutPrefix(raw, stampPrefix); ok {
		if n, text, ok := strings.Cut(rest, " "); ok {
			if ns, err := strconv.ParseInt(n, 10, 64); err == nil {
				who, text := source(text)
				return line{time.Unix(0, ns), who, text}
			}
		}
	}
	if l, ok := logRecord(raw); ok {
		return l
	}
	who, text := source(raw)
	return line{read, who, text}
}

// logRecord reads a JSON log record of job-signal or sidecar-watch, shown
// as their text format shows it, without what the demo's columns say
// already (time, prog, sidecar).
func logRecord(raw string) (line, bool) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return line{}, false
	}
	var at time.Time
	var level slog.Level
	var msg, prog, sidecar string
	var attrs []slog.Attr
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return line{}, false
		}
		key, _ := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return line{}, false
		}
		s, _ := v.(string)
		switch key {
		case slog.TimeKey:
			if at, err = time.Parse(time.RFC3339Nano, s); err != nil {
				return line{}, false
			}
		case slog.LevelKey:
			if level.UnmarshalText([]byte(s)) != nil {
				return line{}, false
			}
		case slog.MessageKey:
			msg = s
		case "prog":
			prog = s
		case "sidecar":
			sidecar = s
		default:
			attrs = append(attrs, slog.Any(key, v))
		}
	}
	if at.IsZero() || prog == "" {
		return line{}, false
	}
	who := cmp.Or(sidecar, prog)
	if sidecar == "" && prog == "job-signal" {
		who = "job"
	}
	var text bytes.Buffer
	h := slog.NewTextHandler(&text, &slog.HandlerOptions{Level: slog.LevelDebug})
	r := slog.NewRecord(time.Time{}, level, msg, 0) // no time: the handler leaves it out
	r.AddAttrs(attrs...)
	_ = h.Handle(context.Background(), r)
	return line{at, who, strings.TrimSuffix(text.String(), "\n")}, true
}

// ownLine is a workload's line, or the demo's: it starts with its name.
var ownLine = regexp.MustCompile(`^([a-z]+): `)

// source says which container wrote a line of text from what it says:
// the workloads and the demo start their lines with their names.
func source(text string) (who, shown string) {
	m := ownLine.FindStringSubmatch(text)
	switch {
	case m == nil:
		return "?", text
	case m[1] == "demo":
		return "demo", strings.TrimPrefix(text, "demo: ")
	}
	return m[1], text
}
