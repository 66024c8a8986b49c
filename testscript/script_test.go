// Package testscript runs the command-line behaviour tests in testdata/:
// one txtar script per behaviour, with job-signal, sidecar-watch and the
// fake workload (internal/testing/fake) run as real processes, so signals, exit
// codes and process groups are real.
package testscript

import (
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
	testscript.Main(m, map[string]func(){
		"job-signal":    func() { os.Exit(jobsignal.MainOS()) },
		"sidecar-watch": func() { os.Exit(sidecarwatch.MainOS()) },
		"fake":          func() { os.Exit(fake.Main(os.Args[1:])) },
	})
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
