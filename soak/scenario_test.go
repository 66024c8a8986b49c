//go:build soak

package soak

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Scenario kinds: how the job's main side ends.
const (
	kindExit        = "exit"        // COMMAND exits with a code 0..5
	kindSignal      = "signal"      // COMMAND dies by a signal
	kindOOM         = "oom"         // job-signal and COMMAND SIGKILLed together
	kindTermination = "termination" // Pod deleted: SIGTERM to every container
	kindOnFailure   = "onfailure"   // OnFailure: a failed attempt, then a good one
)

var kinds = []struct {
	name   string
	weight int
}{
	{kindExit, 30}, {kindSignal, 15}, {kindOOM, 15}, {kindTermination, 20}, {kindOnFailure, 20},
}

// sidecarNames are DNS labels, as --name requires.
var sidecarNames = []string{"proxy", "auth", "agent", "logs", "metrics", "vault"}

// sidecar is one sidecar-watch and the workload it runs.
type sidecar struct {
	Name       string
	Ready      string // "", "file" or "tcp"
	ReadyDelay time.Duration
	After      []string // --after: start order
	StopAfter  []string // --stop-after: stop order
	StopSignal string   // as passed to --stop-signal
	Signal     string   // the same without any SIG prefix, for the workload
	OnStop     string   // workload: exit, raise or ignore
	StopCode   int
	Crashes    int // the first runs crash at once...
	CrashCode  int // ...with this code
	Never      bool
	Grandchild bool
	Quit       string // "" (no --quit-url), or the workload's answer: exit, ignore, fail
	Grace      time.Duration
	Subreaper  bool
	Poll       bool
	StartDelay time.Duration
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
	TermCode  int // termination: COMMAND exits with this code on SIGTERM
	Poll      bool
	Subreaper bool
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
}

func (sc *scenario) sidecar(name string) *sidecar {
	for _, s := range sc.Sidecars {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// newScenario draws a lifecycle from seed.
func newScenario(index int, seed uint64) *scenario {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	sc := &scenario{Index: index, Seed: seed, RestartPolicy: "Never"}
	sc.Kind = pickKind(r)
	sc.PreCreateDir = r.IntN(2) == 0
	sc.DirFromEnv = r.IntN(4) == 0
	n := r.IntN(7)
	names := slices.Clone(sidecarNames)
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for i := range n {
		sc.Sidecars = append(sc.Sidecars, newSidecar(r, names[i], sc.Kind))
	}
	addEdges(r, sc)
	for _, s := range sc.Sidecars {
		if reliable(s) && r.IntN(2) == 0 {
			sc.WaitFor = append(sc.WaitFor, s.Name)
		}
	}
	sc.Attempts = newAttempts(r, sc)
	return sc
}

func pickKind(r *rand.Rand) string {
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	n := r.IntN(total)
	for _, k := range kinds {
		if n < k.weight {
			return k.name
		}
		n -= k.weight
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
	s.OnStop = []string{"exit", "exit", "raise", "raise", "ignore"}[r.IntN(5)]
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
	// starts belong to the other kinds.
	s.Late = kind != kindTermination && r.IntN(10) == 0
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
		second := attempt{Delay: ms(r, 100), Run: ms(r, 200), Poll: r.IntN(10) == 0, Subreaper: r.IntN(10) < 3}
		return []attempt{a, second}
	}
	return []attempt{a}
}

// jobSignals are the signals COMMAND may die by (the Go runtime dies of
// these when it raises them itself; see the workload).
var jobSignals = []string{"KILL", "TERM", "INT", "HUP"}

// String describes the scenario for a failure report.
func (sc *scenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lifecycle %d, seed %d (replay: SOAK_SEED=%d SOAK_LIFECYCLES=1), kind %s, restart-policy %s, wait-for %v, pre-created dir %v, --dir from env %v\n",
		sc.Index, sc.Seed, sc.Seed, sc.Kind, sc.RestartPolicy, sc.WaitFor, sc.PreCreateDir, sc.DirFromEnv)
	if sc.Kind == kindTermination {
		from := "COMMAND started"
		if sc.TermEarly {
			from = "job-signal started"
		}
		fmt.Fprintf(&b, "  Pod termination %s after %s\n", sc.TermAfter, from)
	}
	for i, a := range sc.Attempts {
		fmt.Fprintf(&b, "  attempt %d: %+v\n", i+1, a)
	}
	for _, s := range sc.Sidecars {
		fmt.Fprintf(&b, "  sidecar %+v\n", *s)
	}
	return b.String()
}
