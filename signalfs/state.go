package signalfs

import (
	"fmt"
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

// SidecarPhase is where a sidecar is in its life.
type SidecarPhase string

const (
	SidecarWaiting    SidecarPhase = "waiting"    // waiting for its --after sidecars before starting
	SidecarStarting   SidecarPhase = "starting"   // COMMAND started, readiness not yet passed
	SidecarReady      SidecarPhase = "ready"      // readiness passed
	SidecarRestarting SidecarPhase = "restarting" // COMMAND died on its own; restart after back-off
	SidecarStopping   SidecarPhase = "stopping"   // job done; stopping (possibly waiting for --stop-after)
	SidecarStopped    SidecarPhase = "stopped"    // stopped on purpose
	SidecarFailed     SidecarPhase = "failed"     // gave up; will not become ready
)

// SidecarState is the content of sidecar-NAME.state, written only by the
// sidecar-watch with that --name.
type SidecarState struct {
	Name      string
	Phase     SidecarPhase
	PID       int    // sidecar-watch's PID
	ChildPID  int    // the sidecar command's PID while it runs
	Liveness  string // flock: sidecar-watch holds sidecar-NAME.lock; none
	Version   string // sidecar-watch's version, for status to compare
	Restarts  int
	After     []string
	StopAfter []string
	LastError string // last readiness failure or exit, for people and the ready gate's error
	ExitCode  int    // last exit code of the command, when it has exited (-1: none yet)
	// Terminating: sidecar-watch was told to stop (Pod termination); set
	// with phase stopped, it is why the sidecar stopped.
	Terminating bool
	Updated     time.Time
}

const kindSidecar = "sidecar"

// MarshalText encodes the state in the marker format.
func (s SidecarState) MarshalText() ([]byte, error) {
	if err := ValidName(s.Name); err != nil {
		return nil, err
	}
	r := newRecord(kindSidecar)
	r.set("name", s.Name)
	r.set("phase", string(s.Phase))
	r.set("liveness", s.Liveness)
	r.setText("version", s.Version)
	r.set("pid", itoaNonZero(s.PID))
	r.set("child-pid", itoaNonZero(s.ChildPID))
	r.set("restarts", strconv.Itoa(s.Restarts))
	r.set("after", strings.Join(s.After, ","))
	r.set("stop-after", strings.Join(s.StopAfter, ","))
	if s.ExitCode >= 0 {
		r.set("exit-code", strconv.Itoa(s.ExitCode))
	}
	r.setText("last-error", s.LastError)
	if s.Terminating {
		r.set("terminating", "true")
	}
	r.set("updated", formatTime(s.Updated))
	return r.encode()
}

// UnmarshalText parses sidecar state content, rejecting anything malformed.
func (s *SidecarState) UnmarshalText(data []byte) error {
	r, err := parseRecord(data, kindSidecar)
	if err != nil {
		return err
	}
	out := SidecarState{Name: r.str("name", true)}
	if out.Name != "" {
		if err := ValidName(out.Name); err != nil {
			r.fail(fmt.Errorf("%w: %v", ErrMalformed, err))
		}
	}
	out.Phase = SidecarPhase(r.oneOf("phase", true, string(SidecarWaiting), string(SidecarStarting), string(SidecarReady),
		string(SidecarRestarting), string(SidecarStopping), string(SidecarStopped), string(SidecarFailed)))
	out.Liveness = r.oneOf("liveness", false, LivenessFlock, LivenessNone)
	out.Version = r.str("version", false)
	out.PID = r.integer("pid", false, 1, 1<<22)
	out.ChildPID = r.integer("child-pid", false, 1, 1<<22)
	out.Restarts = r.integer("restarts", false, 0, 1<<30)
	out.After = r.names("after")
	out.StopAfter = r.names("stop-after")
	out.ExitCode = -1
	if _, ok := r.values["exit-code"]; ok {
		out.ExitCode = r.integer("exit-code", true, 0, 255)
	}
	out.LastError = r.str("last-error", false)
	out.Terminating = r.boolean("terminating")
	out.Updated = r.time("updated")
	if r.err != nil {
		return r.err
	}
	*s = out
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
