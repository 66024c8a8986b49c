package jobsignal

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/signalfs"
)

// StatusCmd prints what the shared directory says, for a person at
// kubectl exec.
type StatusCmd struct {
	Dir  string `name:"dir" default:"${dir}" env:"JOB_SIGNAL_DIR" placeholder:"PATH" help:"The shared directory."`
	JSON bool   `name:"json" help:"Print JSON instead of text."`
}

// Status is the JSON form of the status report.
type Status struct {
	Dir      string          `json:"dir"`
	Job      *JobStatus      `json:"job"`
	Sidecars []SidecarStatus `json:"sidecars"`
	Errors   []string        `json:"errors,omitempty"`
	// LockWithoutState: job.lock exists but job.state does not.
	LockWithoutState bool `json:"lockWithoutState,omitempty"`
	lockHeld         bool
	now              time.Time
}

// JobStatus is the job part of the status report.
type JobStatus struct {
	Attempt       int       `json:"attempt"`
	Phase         string    `json:"phase"`
	Alive         bool      `json:"alive"`    // job-signal holds job.lock
	Liveness      string    `json:"liveness"` // flock, or none: Alive cannot be known
	RestartPolicy string    `json:"restartPolicy"`
	WaitFor       []string  `json:"waitFor,omitempty"`
	Started       time.Time `json:"started"`
	Updated       time.Time `json:"updated"`
	ExitCode      *int      `json:"exitCode,omitempty"`
	Reason        string    `json:"reason,omitempty"`
	Signal        string    `json:"signal,omitempty"`
	Message       string    `json:"message,omitempty"`
}

// SidecarStatus is one sidecar in the status report.
type SidecarStatus struct {
	Name      string    `json:"name"`
	Phase     string    `json:"phase"`
	Restarts  int       `json:"restarts"`
	After     []string  `json:"after,omitempty"`
	StopAfter []string  `json:"stopAfter,omitempty"`
	ExitCode  *int      `json:"exitCode,omitempty"`
	LastError string    `json:"lastError,omitempty"`
	Updated   time.Time `json:"updated"`
}

// Run prints the status. Unreadable files are reported, not fatal: the
// point is to see as much as possible.
func (c *StatusCmd) Run(env *cli.Env) error {
	dir, err := signalfs.Open(c.Dir, false)
	if err != nil {
		return cli.Failf("--dir %s: %w", c.Dir, err)
	}
	st := collectStatus(dir)
	if c.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	return st.writeText(env.Stdout)
}

func collectStatus(dir *signalfs.Dir) Status {
	st := Status{Dir: dir.Path(), Sidecars: []SidecarStatus{}, now: time.Now()}
	job, found, err := dir.ReadJob()
	if err != nil {
		st.Errors = append(st.Errors, err.Error())
	}
	if !found && err == nil && dir.JobLockExists() {
		st.LockWithoutState = true
		st.lockHeld, _ = dir.JobLockHeld()
	}
	if found {
		alive, err := dir.JobLockHeld()
		if err != nil {
			st.Errors = append(st.Errors, err.Error())
		}
		js := &JobStatus{Attempt: job.Attempt, Phase: string(job.Phase), Alive: alive, Liveness: job.Liveness, RestartPolicy: job.RestartPolicy,
			WaitFor: job.WaitFor, Started: job.Started, Updated: job.Updated}
		if job.Phase == signalfs.JobDone {
			code := job.ExitCode
			js.ExitCode, js.Reason, js.Signal, js.Message = &code, job.Reason, job.Signal, job.Message
		}
		st.Job = js
	}
	names, err := dir.SidecarNames()
	if err != nil {
		st.Errors = append(st.Errors, err.Error())
	}
	for _, name := range names {
		s, found, err := dir.ReadSidecar(name)
		if err != nil {
			st.Errors = append(st.Errors, err.Error())
			continue
		}
		if !found {
			continue // removed since listing
		}
		ss := SidecarStatus{Name: s.Name, Phase: string(s.Phase), Restarts: s.Restarts, After: s.After,
			StopAfter: s.StopAfter, LastError: s.LastError, Updated: s.Updated}
		if s.ExitCode >= 0 {
			code := s.ExitCode
			ss.ExitCode = &code
		}
		st.Sidecars = append(st.Sidecars, ss)
	}
	return st
}

func (st Status) writeText(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "directory %s\n\n", st.Dir)
	switch j := st.Job; {
	case j == nil && st.LockWithoutState && st.lockHeld:
		fmt.Fprintln(tw, "job: job-signal is starting")
	case j == nil && st.LockWithoutState:
		fmt.Fprintln(tw, "job: job-signal died before writing its state (killed or OOM-killed at start)")
	case j == nil:
		fmt.Fprintln(tw, "job: no job-signal has run here yet")
	default:
		fmt.Fprintf(tw, "job: attempt %d, %s\n", j.Attempt, st.jobLine(j))
		if len(j.WaitFor) > 0 {
			fmt.Fprintf(tw, "     waits for %s\n", strings.Join(j.WaitFor, ", "))
		}
	}
	fmt.Fprintln(tw)
	if len(st.Sidecars) == 0 {
		fmt.Fprintln(tw, "sidecars: none has reported yet")
	} else {
		fmt.Fprintln(tw, "SIDECAR\tPHASE\tRESTARTS\tUPDATED\tDETAIL")
		for _, s := range st.Sidecars {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s ago\t%s\n", s.Name, s.Phase, s.Restarts, st.age(s.Updated), sidecarDetail(s))
		}
	}
	for _, e := range st.Errors {
		fmt.Fprintf(tw, "error: %s\n", e)
	}
	return tw.Flush()
}

func (st Status) jobLine(j *JobStatus) string {
	switch {
	case j.Phase == string(signalfs.JobDone):
		line := fmt.Sprintf("done %s ago: exit code %d (%s)", st.age(j.Updated), *j.ExitCode, j.Reason)
		if j.Message != "" {
			line += ": " + j.Message
		}
		return line
	case !j.Alive && j.Liveness == signalfs.LivenessFlock:
		return fmt.Sprintf("%s, but job-signal is not running (killed without writing done?)", j.Phase)
	case j.Phase == string(signalfs.JobRunning):
		return fmt.Sprintf("running for %s", st.age(j.Updated))
	default:
		return fmt.Sprintf("waiting for sidecars for %s", st.age(j.Started))
	}
}

func sidecarDetail(s SidecarStatus) string {
	var parts []string
	if len(s.After) > 0 {
		parts = append(parts, "after "+strings.Join(s.After, ","))
	}
	if len(s.StopAfter) > 0 {
		parts = append(parts, "stops after "+strings.Join(s.StopAfter, ","))
	}
	if s.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("last exit code %d", *s.ExitCode))
	}
	if s.LastError != "" {
		parts = append(parts, s.LastError)
	}
	return strings.Join(parts, "; ")
}

func (st Status) age(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return st.now.Sub(t).Round(100 * time.Millisecond).String()
}
