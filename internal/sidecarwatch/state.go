package sidecarwatch

import (
	"fmt"

	"github.com/job-signal/job-signal/signalfs"
)

// life is sidecar-watch's whole state: where it is (stage), what its state
// file says (recorded), whether the Pod is terminating, what of the sidecar
// runs (runs), and whether it is stopped for a failure. Everything the
// loop decides by is here or in the pure decisions' answers; the loop's
// other fields are what it holds (processes, timers, watchers, channels)
// and what it reports. life changes only through next, a pure function
// held to ARCHITECTURE.md's table by state_test.go; the loop owns the one
// value and does what each change asks for (timers, signals, writes, logs).
type life struct {
	stage    stage
	recorded signalfs.SidecarPhase // the phase written to sidecar-NAME.state
	// terminating: the Pod is going away (a termination signal, or an
	// --after sidecar that stopped for it); the sidecar keeps serving
	// until the job is done or --grace has passed.
	terminating bool
	runs        runs
	// failing: sidecar-watch cannot go on (--job-start-timeout, the
	// directory lost): the stop sequence ends in failed, not stopped.
	failing bool
}

// runs is what of the sidecar runs, as the loop has seen it.
type runs int

const (
	runsNone    runs = iota // nothing: not started yet, between restarts, or gone
	runsCommand             // its command
	runsExited              // its command has ended, while stopping: what it left may live on
	runsDaemon              // a daemon its command left, adopted by sidecar-watch
)

var runsNames = [...]string{"none", "command", "exited", "daemon"}

func (r runs) String() string { return runsNames[r] }

// stage is where sidecar-watch is in its life.
type stage int

const (
	waiting       stage = iota // before the command starts: the first scan, then the --after sidecars
	starting                   // the command (or a daemon it left) runs; its readiness check has not passed
	ready                      // the command (or its daemon) runs and is ready
	restarting                 // the command ended by itself: the back-off before its restart
	stoppingAfter              // the job is done: the --stop-after sidecars stop first
	quitting                   // the --quit-url request is under way
	quitWait                   // the quit URL answered: --grace to exit
	signalled                  // --stop-signal sent: --grace to exit
	killed                     // SIGKILL sent: a few seconds to be gone
	stopped                    // the end: exit 0
	failed                     // the end: sidecar-watch fails
)

var stageNames = [...]string{"waiting", "starting", "ready", "restarting", "stoppingAfter", "quitting", "quitWait", "signalled", "killed", "stopped", "failed"}

func (s stage) String() string { return stageNames[s] }

// runs: the command, or what it left, may run and may be restarted.
func (s stage) runs() bool { return s == starting || s == ready || s == restarting }

// stopping: the stop sequence is under way (--quit-url, --stop-signal,
// --grace, SIGKILL).
func (s stage) stopping() bool { return s >= quitting && s <= killed }

// requested: the stop request has left (the quit URL answered, or a
// signal was sent).
func (s stage) requested() bool { return s >= quitWait && s <= killed }

func (s stage) finished() bool { return s == stopped || s == failed }

// event is what happened, as the loop's handlers learn it from the pure
// decisions (decide.go, order.go) or from the stop sequence's own steps.
type event int

const (
	evTerminating  event = iota // the Pod is terminating
	evStart                     // the command was started
	evReady                     // its readiness check passed, or there is none
	evEnded                     // it ended by itself (or its adopted daemon did), and was reaped
	evAdopted                   // a daemon it left is the sidecar now
	evRestart                   // it ended by itself and is restarted after a back-off
	evStopAfter                 // the job is done: wait for the --stop-after sidecars
	evQuitPosted                // the stop sequence begins with the --quit-url request
	evQuitAnswered              // the --quit-url request ended (answered or failed)
	evSignalSent                // --stop-signal was sent to the sidecar's process groups
	evKillSent                  // SIGKILL was sent, --grace being over
	evExited                    // the command ended while being stopped
	evSlow                      // the sidecar takes a while to exit: record "stopping"
	evFailing                   // sidecar-watch cannot go on: stop the sidecar, then fail
	evStopped                   // the sidecar is gone (or never started): exit 0
	evFailed                    // sidecar-watch fails
)

var eventNames = [...]string{"terminating", "start", "ready", "ended", "adopted", "restart", "stopAfter", "quitPosted",
	"quitAnswered", "signalSent", "killSent", "exited", "slow", "failing", "stopped", "failed"}

func (e event) String() string { return eventNames[e] }

// newLife is the state sidecar-watch starts in: waiting, recorded as
// waiting when it has --after sidecars to wait for, else as starting.
func newLife(hasAfter bool) life {
	if hasAfter {
		return life{stage: waiting, recorded: signalfs.SidecarWaiting}
	}
	return life{stage: waiting, recorded: signalfs.SidecarStarting}
}

// next is the state after e, or an error when e cannot happen in s (a bug
// of the loop: it keeps s).
func (s life) next(e event) (life, error) {
	ok := false
	to := func(st stage, recorded signalfs.SidecarPhase) {
		s.stage, s.recorded, ok = st, recorded, true
	}
	from := s.stage
	switch e {
	case evTerminating:
		if !from.finished() {
			s.terminating, ok = true, true
		}
	case evStart:
		if from == waiting || from == restarting {
			to(starting, signalfs.SidecarStarting)
			s.runs = runsCommand
		}
	case evReady:
		// ready again: a daemon adopted from the ready command is checked
		// as the command was.
		if from == starting || from == ready {
			to(ready, signalfs.SidecarReady)
		}
	case evEnded:
		if from == starting || from == ready {
			s.runs, ok = runsNone, true
		}
	case evAdopted:
		if from == starting || from == ready {
			s.runs, ok = runsDaemon, true
		}
	case evRestart:
		if from == starting || from == ready {
			to(restarting, signalfs.SidecarRestarting)
		}
	case evStopAfter:
		if from.runs() {
			to(stoppingAfter, signalfs.SidecarStopping)
		}
	case evQuitPosted:
		if from.runs() || from == stoppingAfter {
			to(quitting, s.recorded) // "stopping" is recorded only if it takes a while (evSlow)
		}
	case evQuitAnswered:
		if from == quitting {
			to(quitWait, s.recorded)
		}
	case evSignalSent:
		if from.runs() || from == stoppingAfter || from == quitWait {
			to(signalled, s.recorded)
		}
	case evKillSent:
		if from == signalled {
			to(killed, s.recorded)
		}
	case evExited:
		if from == stoppingAfter || from.stopping() {
			s.runs, ok = runsExited, true
		}
	case evSlow:
		if from.stopping() {
			to(from, signalfs.SidecarStopping)
		}
	case evFailing:
		if !from.finished() {
			s.failing, ok = true, true
		}
	case evStopped:
		if !from.finished() {
			to(stopped, signalfs.SidecarStopped)
			s.runs = runsNone
		}
	case evFailed:
		if !from.finished() {
			to(failed, signalfs.SidecarFailed)
			s.runs = runsNone
		}
	}
	if !ok {
		return s, fmt.Errorf("%s cannot happen in stage %s", e, from)
	}
	return s, nil
}
