package fake

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/job-signal/job-signal/internal/procfs"
)

// Event is one record of -events: "KIND UNIXNANO DETAIL".
type Event struct {
	Kind   string // start, ready, stop, quit, exit, crash, error
	At     time.Time
	Detail string
}

// Events are the records of one fake (or several sharing a file).
type Events []Event

// ReadEvents reads an -events file; a missing file holds no events.
func ReadEvents(path string) (Events, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events Events
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		stamp, detail, _ := strings.Cut(rest, " ")
		ns, err := strconv.ParseInt(stamp, 10, 64)
		if err != nil {
			// A record cut short by a SIGKILL mid-write: rare, harmless.
			continue
		}
		events = append(events, Event{kind, time.Unix(0, ns), detail})
	}
	return events, sc.Err()
}

// Of keeps the events of the given kinds.
func (h Events) Of(kinds ...string) Events {
	var out Events
	for _, e := range h {
		if slices.Contains(kinds, e.Kind) {
			out = append(out, e)
		}
	}
	return out
}

// First is the earliest event's time; false when there is none.
func (h Events) First() (time.Time, bool) {
	if len(h) == 0 {
		return time.Time{}, false
	}
	return slices.MinFunc(h, func(a, b Event) int { return a.At.Compare(b.At) }).At, true
}

// Last is the latest event's time; false when there is none.
func (h Events) Last() (time.Time, bool) {
	if len(h) == 0 {
		return time.Time{}, false
	}
	return slices.MaxFunc(h, func(a, b Event) int { return a.At.Compare(b.At) }).At, true
}

// FirstOf is the time of the first event of kind in the file at path, for
// a caller that needs it: an error says which is missing.
func FirstOf(path, kind string) (time.Time, error) {
	events, err := ReadEvents(path)
	if err != nil {
		return time.Time{}, err
	}
	t, ok := events.Of(kind).First()
	if !ok {
		return time.Time{}, fmt.Errorf("%s: no %q event", path, kind)
	}
	return t, nil
}

// recorder appends events to -events.
type recorder struct{ f *os.File }

func openRecorder(path string) (recorder, error) {
	if path == "" {
		return recorder{}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	return recorder{f}, err
}

// add records an event. The time is taken first; one write per record on
// an O_APPEND file keeps records of several processes whole.
func (r recorder) add(kind, detail string) {
	if r.f == nil {
		return
	}
	now := time.Now().UnixNano()
	r.f.WriteString(kind + " " + strconv.FormatInt(now, 10) + " " + detail + "\n")
}

// PID is one record of -pids: a process a fake became, with its start
// time so that a later process reusing the PID is not taken for it.
type PID struct {
	Name      string
	PID       int
	StartTime uint64 // clock ticks since boot, as procfs.Stat has it
}

// Running reports whether the recorded process still runs (not a zombie).
func (p PID) Running() bool { return procfs.Running(p.PID, p.StartTime) }

// ReadPIDs reads a -pids file; a missing file holds no records.
func ReadPIDs(path string) ([]PID, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []PID
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		pid, err1 := strconv.Atoi(f[1])
		start, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 == nil && err2 == nil {
			recs = append(recs, PID{f[0], pid, start})
		}
	}
	return recs, nil
}

// registerPID appends process pid to the -pids file at path.
func registerPID(path, name string, pid int) error {
	if path == "" {
		return nil
	}
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(fmt.Sprintf("%s %d %d\n", name, pid, st.StartTime))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
