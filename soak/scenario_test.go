//go:build soak

package soak

import (
	"math/rand/v2"
	"slices"
	"time"
)

// Scenario kinds: how the job's main side ends.
const (
	kindExit        = "exit"        // COMMAND exits with a code 0..5
	kindSignal      = "signal"      // COMMAND dies by a signal
	kindOOM         = "oom"         // job-signal and COMMAND SIGKILLed together
	kindTermination = "termination" // Pod deleted: SIGTERM to every container
	kindOnFailure   = "onfailure"   // OnFailure: a failed attempt, then a good one
	// The faults of faults_test.go:
	kindFull        = "full"        // the directory is full (a small tmpfs; root only)
	kindTermRestart = "termrestart" // OnFailure: TERM to job-signal alone, then a good attempt
	kindStopKill    = "stopkill"    // a --stop-after sidecar's container SIGKILLed while stopping
	kindEarlyKill   = "earlykill"   // job-signal SIGKILLed in its first milliseconds
)

var kinds = []struct {
	name   string
	weight int
}{
	{kindExit, 30}, {kindSignal, 15}, {kindOOM, 15}, {kindTermination, 20}, {kindOnFailure, 20},
	{kindFull, 14}, {kindTermRestart, 12}, {kindStopKill, 12}, {kindEarlyKill, 16},
}

// sidecarNames are DNS labels, as --name requires.
var sidecarNames = []string{"proxy", "auth", "agent", "logs", "metrics", "vault"}

// sidecar is one sidecar-watch and the fake it runs.
type sidecar struct {
	Name       string
	Ready      string // "", "file" or "tcp"
	ReadyDelay time.Duration
	After      []string // --after: start order
	StopAfter  []string // --stop-after: stop order
	StopSignal string   // as passed to --stop-signal
	Signal     string   // the same without any SIG prefix, for the fake
	OnStop     string   // the fake's -on-stop: exit (with StopCode), die or ignore
	StopCode   int
	Crashes    int // the first runs crash at once...
	CrashCode  int // ...with this code
	Never      bool
	Grandchild bool
	Quit       string // "" (no --quit-url), or the fake's answer: exit, ignore, fail
	Grace      time.Duration
	// StopAfterTimeout is --stop-after-timeout when not 0 (the default,
	// 30s, otherwise).
	StopAfterTimeout time.Duration
	Subreaper        bool
	Poll             bool
	StartDelay       time.Duration
	// Late sidecars start only after the job's last attempt has ended:
	// they must find the done marker already there.
	Late bool
}

// mayFail is a sidecar that ends by itself before the job is done
// (crashes under --restart Never), so sidecar-watch exits with its code.
func (s *sidecar) mayFail() bool { return s.Never && s.Crashes > 0 }

// attempt is one run of job-signal on the directory.
type attempt struct {
	Delay    time.Duration // after the previous attempt ended (or from the start)
	Run      time.Duration // how long COMMAND runs before ending by itself
	Exit     int           // its exit code...
	KillSelf string        // ...or the signal it dies by
	// OOM: the harness SIGKILLs job-signal and COMMAND OOMAfter after
	// COMMAND started, or, with OOMEarly, after job-signal started (maybe
	// still at its ready gate).
	OOM       bool
	OOMEarly  bool
	OOMAfter  time.Duration
	TermCode  int // termination, TermAlone: COMMAND exits with this code on SIGTERM (-1: dies of it)
	Poll      bool
	Subreaper bool
	// TermAlone: SIGTERM to this job-signal alone (a failed liveness
	// probe), at the scenario's TermEarly and TermAfter.
	TermAlone bool
	// Fill: COMMAND fills the directory before it ends.
	Fill bool
	// FreeSpace: the harness frees the directory's space before this
	// attempt.
	FreeSpace bool
}

// scenario is everything random about one lifecycle. It is a function of
// the seed alone, so a failing lifecycle can be replayed.
type scenario struct {
	Index         int
	Seed          uint64
	Kind          string
	PreCreateDir  bool
	DirFromEnv    bool
	Sidecars      []*sidecar
	WaitFor       []string
	RestartPolicy string
	Attempts      []attempt
	// Termination: SIGTERM goes to every started wrapper TermAfter after
	// COMMAND started, or, with TermEarly, after job-signal started.
	TermEarly bool
	TermAfter time.Duration
	// FullAtStart: the directory is filled before job-signal starts.
	FullAtStart bool
	// StopKill is the sidecar whose container is SIGKILLed while it stops.
	StopKill string
}

func (sc *scenario) sidecar(name string) *sidecar {
	for _, s := range sc.Sidecars {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// newScenario draws a lifecycle from seed; kindFull only when canMount.
func newScenario(index int, seed uint64, canMount bool) *scenario {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	sc := &scenario{Index: index, Seed: seed, RestartPolicy: "Never"}
	sc.Kind = pickKind(r, canMount)
	sc.PreCreateDir = r.IntN(2) == 0 || sc.Kind == kindFull // a mount point
	sc.DirFromEnv = r.IntN(4) == 0
	n := r.IntN(7)
	if sc.Kind == kindStopKill {
		n = 2 + r.IntN(5) // the one killed and one that waits for it
	}
	names := slices.Clone(sidecarNames)
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for i := range n {
		sc.Sidecars = append(sc.Sidecars, newSidecar(r, names[i], sc.Kind))
	}
	addEdges(r, sc)
	if sc.Kind == kindStopKill {
		chooseStopKill(r, sc)
	}
	for _, s := range sc.Sidecars {
		if reliable(s) && r.IntN(2) == 0 {
			sc.WaitFor = append(sc.WaitFor, s.Name)
		}
	}
	sc.Attempts = newAttempts(r, sc)
	return sc
}

func pickKind(r *rand.Rand, canMount bool) string {
	weight := func(name string, w int) int {
		if name == kindFull && !canMount {
			return 0
		}
		return w
	}
	total := 0
	for _, k := range kinds {
		total += weight(k.name, k.weight)
	}
	n := r.IntN(total)
	for _, k := range kinds {
		if n < weight(k.name, k.weight) {
			return k.name
		}
		n -= weight(k.name, k.weight)
	}
	panic("unreachable")
}

func ms(r *rand.Rand, max int) time.Duration { return time.Duration(r.IntN(max)) * time.Millisecond }

func newSidecar(r *rand.Rand, name, kind string) *sidecar {
	s := &sidecar{Name: name, Grace: 200 * time.Millisecond, StartDelay: ms(r, 300)}
	if r.IntN(2) == 0 {
		s.Grace = 400 * time.Millisecond
	}
	s.Ready = []string{"", "file", "tcp"}[r.IntN(3)]
	s.ReadyDelay = ms(r, 150)
	s.Signal = "TERM"
	if r.IntN(5) < 2 {
		s.Signal = []string{"INT", "HUP", "QUIT", "USR1", "USR2", "KILL"}[r.IntN(6)]
	}
	s.StopSignal = s.Signal
	if r.IntN(3) == 0 {
		s.StopSignal = "SIG" + s.Signal // both spellings are documented
	}
	s.OnStop = []string{"exit", "exit", "die", "die", "ignore"}[r.IntN(5)]
	s.StopCode = r.IntN(4)
	if r.IntN(5) == 0 {
		s.Crashes, s.CrashCode = 1+r.IntN(3), 1+r.IntN(4)
	}
	s.Never = r.IntN(7) == 0
	s.Grandchild = r.IntN(4) == 0
	if r.IntN(5) == 0 {
		s.Quit = []string{"exit", "exit", "exit", "ignore", "fail"}[r.IntN(5)]
	}
	s.Subreaper = r.IntN(10) < 7
	s.Poll = r.IntN(10) == 0
	// A kubelet starts no container in a Pod being deleted, so late
	// starts belong to the other kinds. Where the job waits for the
	// sidecars to have started (startSidecarsFirst), none is late.
	s.Late = kind != kindTermination && !startSidecarsFirst(kind) && r.IntN(10) == 0
	return s
}

// reliable sidecars will become ready while the job runs: others may wait
// for them.
func reliable(s *sidecar) bool { return !s.mayFail() && !s.Late }

// addEdges draws --after and --stop-after edges, each from a random order
// of the sidecars to sidecars earlier in that order, so that neither graph
// has a cycle. --after only points to reliable sidecars: waiting for one
// that never comes is a configuration error, not a fault under test. So
// everything a reliable sidecar waits for is reliable too, and the job may
// wait for any reliable sidecar.
func addEdges(r *rand.Rand, sc *scenario) {
	start := r.Perm(len(sc.Sidecars))
	stop := r.Perm(len(sc.Sidecars))
	for i := range sc.Sidecars {
		s := sc.Sidecars[start[i]]
		for _, j := range start[:i] {
			if t := sc.Sidecars[j]; reliable(t) && r.IntN(10) < 3 {
				s.After = append(s.After, t.Name)
			}
		}
		s = sc.Sidecars[stop[i]]
		for _, j := range stop[:i] {
			if r.IntN(10) < 3 {
				s.StopAfter = append(s.StopAfter, sc.Sidecars[j].Name)
			}
		}
	}
}

func newAttempts(r *rand.Rand, sc *scenario) []attempt {
	a := attempt{Delay: ms(r, 50), Run: ms(r, 300), Poll: r.IntN(10) == 0, Subreaper: r.IntN(10) < 3}
	switch sc.Kind {
	case kindExit:
		a.Exit = r.IntN(6)
		// Success is final under OnFailure too.
		if a.Exit == 0 && r.IntN(3) == 0 {
			sc.RestartPolicy = "OnFailure"
		}
	case kindSignal:
		a.KillSelf = jobSignals[r.IntN(len(jobSignals))]
	case kindOOM:
		a.OOM, a.OOMEarly, a.OOMAfter = true, r.IntN(5) == 0, ms(r, 200)
	case kindTermination:
		a.TermCode = r.IntN(6)
		sc.TermEarly, sc.TermAfter = r.IntN(4) == 0, ms(r, 200)
		// Pod termination is final whatever the restart policy.
		if r.IntN(3) == 0 {
			sc.RestartPolicy = "OnFailure"
		}
	case kindOnFailure:
		sc.RestartPolicy = "OnFailure"
		switch r.IntN(4) {
		case 0:
			a.KillSelf = jobSignals[r.IntN(len(jobSignals))]
		case 1:
			a.OOM, a.OOMEarly, a.OOMAfter = true, r.IntN(5) == 0, ms(r, 200)
		default:
			a.Exit = 1 + r.IntN(5)
		}
		return []attempt{a, secondAttempt(r)}
	case kindFull:
		return fullAttempts(r, sc, a)
	case kindTermRestart:
		return termRestartAttempts(r, sc, a)
	case kindStopKill:
		a.Exit = r.IntN(6)
	case kindEarlyKill:
		return earlyKillAttempts(r, sc, a)
	}
	return []attempt{a}
}

// secondAttempt is an attempt after a failed one under OnFailure: it
// succeeds.
func secondAttempt(r *rand.Rand) attempt {
	return attempt{Delay: ms(r, 100), Run: ms(r, 200), Poll: r.IntN(10) == 0, Subreaper: r.IntN(10) < 3}
}

// jobSignals are the signals COMMAND may die by (the Go runtime dies of
// these when it raises them itself; see internal/testing/fake).
var jobSignals = []string{"KILL", "TERM", "INT", "HUP"}
