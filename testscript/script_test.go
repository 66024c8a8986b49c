// Package testscript runs the command-line behaviour tests in testdata/:
// one txtar script per behaviour, with job-signal, sidecar-watch and the
// fake workload (internal/testing/fake) run as real processes, so signals, exit
// codes and process groups are real.
package testscript

import (
	"flag"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/job-signal/job-signal/internal/jobsignal"
	"github.com/job-signal/job-signal/internal/sidecarwatch"
	"github.com/job-signal/job-signal/internal/testing/fake"
)

func TestMain(m *testing.M) {
	testscript.Main(waitBound{m}, map[string]func(){
		"job-signal":    func() { os.Exit(jobsignal.MainOS()) },
		"sidecar-watch": func() { os.Exit(sidecarwatch.MainOS()) },
		"fake":          func() { os.Exit(fake.Main(os.Args[1:])) },
	})
}

// waitBound runs the tests with more scripts at once than go test's
// default of one per CPU, unless -test.parallel is given: a script spends
// its time waiting for processes, signals and timers, not computing, so
// at one per CPU the package was the last of make unit to finish. Only
// the top-level run gets here: the test binary run as job-signal or
// sidecar-watch does not.
type waitBound struct{ m *testing.M }

func (w waitBound) Run() int {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", "8"); err != nil {
			panic(err)
		}
	}
	return w.m.Run()
}

// waitLimit bounds every wait in a script. It is generous on purpose: a
// loaded 2-core CI machine can be slow, and a wait only takes this long
// when the behaviour under test is broken. JOB_SIGNAL_TEST_WAIT overrides.
func waitLimit() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("JOB_SIGNAL_TEST_WAIT")); err == nil {
		return d
	}
	return 60 * time.Second
}

func TestScripts(t *testing.T) {
	update, _ := strconv.ParseBool(os.Getenv("UPDATE_SCRIPTS"))
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       update,
		Setup:               setup,
		Cmds:                commands,
		Condition:           condition,
	})
}

func setup(env *testscript.Env) error {
	procs := &registry{procs: map[string]*started{}}
	env.Values[registryKey{}] = procs
	env.Defer(procs.killAll)
	// Every script gets its own shared directory and termination log, and
	// nothing outside $WORK is touched.
	env.Setenv("JOB_SIGNAL_DIR", env.WorkDir+"/signal")
	env.Setenv("JOB_SIGNAL_TERMINATION_LOG", env.WorkDir+"/termination-log")
	env.Setenv("JOB_SIGNAL_TEST_WAIT", waitLimit().String())
	env.Values[setupVarsKey{}] = append([]string(nil), env.Vars...)
	return nil
}
