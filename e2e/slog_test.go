//go:build e2e

package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The ordering checks read the product's own log (log/slog's text format,
// as the manifests leave it): its time= field stamps each step in the
// container, to the millisecond, from the clock all containers share.
// These are the messages they rely on; if the product renames one, the
// check says which it could not find.
const (
	msgSidecarStarted = "sidecar started"
	msgSidecarReady   = "sidecar ready"
	// The first action on the sidecar's process when it is stopped ("stopping
	// the sidecar" is logged earlier, before waiting for --stop-after).
	msgSentStopSignal = "sent stop signal"
	msgAskedToQuit    = "asked the sidecar to quit"
	msgSidecarStopped = "sidecar stopped"
	msgSidecarKilled  = "sidecar killed"
	msgCommandStarted = "command started"
	// job-signal: a signal passed on to the command, and the job's end.
	msgForwarded  = "forwarded signal"
	msgDoneMarker = "done marker written"
	// sidecar-watch: the Pod is being deleted; it waits for the job.
	msgPodTerminating = "Pod terminating: the sidecar keeps serving until the job is done (a second INT stops it now)"
	msgStopping       = "stopping the sidecar" // why= says what ended it
)

type slogEvent struct {
	time   time.Time
	msg    string
	fields map[string]string
}

// parseSlogText decodes one line of slog's text handler: key=value pairs,
// values quoted with Go syntax when they contain spaces or quotes.
func parseSlogText(line string) (slogEvent, bool) {
	fields := map[string]string{}
	for s := strings.TrimSpace(line); s != ""; s = strings.TrimLeft(s, " ") {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return slogEvent{}, false
		}
		key, rest := s[:eq], s[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return slogEvent{}, false
			}
			val, _ = strconv.Unquote(q)
			s = rest[len(q):]
		} else {
			end := strings.IndexByte(rest, ' ')
			if end < 0 {
				end = len(rest)
			}
			val, s = rest[:end], rest[end:]
		}
		fields[key] = val
	}
	ts, err := time.Parse(time.RFC3339Nano, fields["time"])
	if err != nil || fields["msg"] == "" {
		return slogEvent{}, false
	}
	return slogEvent{time: ts, msg: fields["msg"], fields: fields}, true
}

// slogEvents returns the product's log events of a container.
func slogEvents(log string) []slogEvent {
	var out []slogEvent
	for _, l := range strings.Split(log, "\n") {
		if ev, ok := parseSlogText(l); ok {
			out = append(out, ev)
		}
	}
	return out
}

// eventTime returns when a container's log (as the API returns it) first
// logged one of msgs, failing the test if it never did.
func eventTime(t *testing.T, container, log string, msgs ...string) time.Time {
	t.Helper()
	for _, ev := range slogEvents(log) {
		for _, m := range msgs {
			if ev.msg == m {
				return ev.time
			}
		}
	}
	t.Fatalf("container %s never logged %q; its log:\n%s", container, msgs, log)
	return time.Time{}
}
