package signalfs

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

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
