package signalfs

import (
	"strconv"
	"strings"
	"time"
)

// JobPhase is where the main command is in its life.
type JobPhase string

const (
	JobWaiting JobPhase = "waiting" // at the ready gate
	JobRunning JobPhase = "running" // COMMAND started
	JobDone    JobPhase = "done"    // finished; ExitCode is set
)

// Restart policies, as in the Pod's restartPolicy.
const (
	RestartNever     = "Never"
	RestartOnFailure = "OnFailure"
)

// Liveness tells sidecars how they can learn that job-signal died.
const (
	LivenessFlock = "flock" // job-signal holds an exclusive flock on job.lock
	LivenessNone  = "none"  // flock is not honoured on this filesystem
)

// Reasons a job ended, in JobState.Reason.
const (
	ReasonExited        = "exited"         // COMMAND exited by itself
	ReasonSignaled      = "signaled"       // COMMAND was killed by a signal
	ReasonNotFound      = "not-found"      // COMMAND does not exist (127)
	ReasonNotExecutable = "not-executable" // COMMAND cannot be executed (126)
	ReasonReadyTimeout  = "ready-timeout"  // sidecars not ready in time; COMMAND never ran
	ReasonSidecarFailed = "sidecar-failed" // a sidecar waited for failed for good; COMMAND never ran
	ReasonInterrupted   = "interrupted"    // job-signal was signalled before COMMAND started
	ReasonError         = "error"          // job-signal failed itself
)

// JobState is the content of job.state, written only by job-signal.
type JobState struct {
	Attempt       int      // 1 for the container's first run, +1 per restart under OnFailure
	Phase         JobPhase // waiting, running, done
	PID           int      // job-signal's PID (in its own PID namespace)
	ChildPID      int      // COMMAND's PID once running
	RestartPolicy string   // Never or OnFailure
	Liveness      string   // flock or none
	Version       string   // job-signal's version, for status to compare
	WaitFor       []string // sidecars at the ready gate
	Started       time.Time
	Updated       time.Time

	// Set when Phase is done.
	ExitCode    int
	Reason      string
	Signal      string // signal name when Reason is signaled
	Terminating bool   // job-signal was told to stop (Pod termination)
	Message     string
}

const kindJob = "job"

// MarshalText encodes the state in the marker format.
func (j JobState) MarshalText() ([]byte, error) {
	r := newRecord(kindJob)
	r.set("attempt", strconv.Itoa(j.Attempt))
	r.set("phase", string(j.Phase))
	r.set("restart-policy", j.RestartPolicy)
	r.set("liveness", j.Liveness)
	r.setText("version", j.Version)
	r.set("pid", itoaNonZero(j.PID))
	r.set("child-pid", itoaNonZero(j.ChildPID))
	r.set("wait-for", strings.Join(j.WaitFor, ","))
	r.set("started", formatTime(j.Started))
	r.set("updated", formatTime(j.Updated))
	if j.Phase == JobDone {
		r.set("exit-code", strconv.Itoa(j.ExitCode))
		r.setText("reason", j.Reason)
		r.setText("signal", j.Signal)
		if j.Terminating {
			r.set("terminating", "true")
		}
		r.setText("message", j.Message)
	}
	return r.encode()
}

// UnmarshalText parses job.state content, rejecting anything malformed.
func (j *JobState) UnmarshalText(data []byte) error {
	r, err := parseRecord(data, kindJob)
	if err != nil {
		return err
	}
	s := JobState{
		Attempt:       r.integer("attempt", true, 1, 1<<30),
		Phase:         JobPhase(r.oneOf("phase", true, string(JobWaiting), string(JobRunning), string(JobDone))),
		RestartPolicy: r.oneOf("restart-policy", true, RestartNever, RestartOnFailure),
		Liveness:      r.oneOf("liveness", false, LivenessFlock, LivenessNone),
		Version:       r.str("version", false),
		PID:           r.integer("pid", false, 1, 1<<22),
		ChildPID:      r.integer("child-pid", false, 1, 1<<22),
		WaitFor:       r.names("wait-for"),
		Started:       r.time("started"),
		Updated:       r.time("updated"),
	}
	if s.Phase == JobDone {
		s.ExitCode = r.integer("exit-code", true, 0, 255)
		s.Reason = r.str("reason", true)
		s.Signal = r.str("signal", false)
		s.Terminating = r.boolean("terminating")
		s.Message = r.str("message", false)
	}
	if r.err != nil {
		return r.err
	}
	*j = s
	return nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func itoaNonZero(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
