package jobsignal

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/signalfs"
)

// StatusCmd prints what the shared directory says, for a person at
// kubectl exec.
type StatusCmd struct {
	Dir  string `name:"dir" default:"${dir}" env:"JOB_SIGNAL_DIR" placeholder:"PATH" help:"The shared directory (default ${default})."`
	JSON bool   `name:"json" help:"Print JSON instead of text (keys in lowerCamelCase, durations as Go duration strings)."`
}

// Status is the JSON form of the status report.
type Status struct {
	Dir      string          `json:"dir"`
	Job      *JobStatus      `json:"job"`
	Sidecars []SidecarStatus `json:"sidecars"`
	// Versions lists each program's versions seen in the directory.
	Versions map[string][]string `json:"versions,omitempty"`
	Warnings []string            `json:"warnings,omitempty"`
	Errors   []string            `json:"errors,omitempty"`
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
	Version       string    `json:"version,omitempty"`
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
	Alive     bool      `json:"alive"` // its sidecar-watch holds its lock (true where that cannot be known)
	Restarts  int       `json:"restarts"`
	After     []string  `json:"after,omitempty"`
	StopAfter []string  `json:"stopAfter,omitempty"`
	Version   string    `json:"version,omitempty"`
	ExitCode  *int      `json:"exitCode,omitempty"`
	LastError string    `json:"lastError,omitempty"`
	Updated   time.Time `json:"updated"`
	detail    string
}

// Run prints the status. Unreadable files are reported, not fatal: the
// point is to see as much as possible.
func (c *StatusCmd) Run(env *cli.Env) error {
	dir, err := signalfs.Open(c.Dir, false)
	if err != nil {
		err = fmt.Errorf("--dir %s: %w (give the shared directory with --dir or JOB_SIGNAL_DIR)", c.Dir, err)
		if c.JSON {
			json.NewEncoder(env.Stdout).Encode(map[string]string{"dir": c.Dir, "error": err.Error()})
		}
		return cli.Failf("%w", err)
	}
	defer dir.Close()
	st := collectStatus(dir)
	if c.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	return st.writeText(env.Stdout)
}

func collectStatus(dir *signalfs.Dir) Status {
	st := Status{Dir: dir.Path(), Sidecars: []SidecarStatus{}, Versions: map[string][]string{}, now: time.Now()}
	job := dir.Job()
	if job.Err != nil {
		st.Errors = append(st.Errors, job.Err.Error())
	}
	if job.LockErr != nil {
		st.Errors = append(st.Errors, job.LockErr.Error())
	}
	if !job.Found && job.Err == nil && job.Lock != signalfs.LockAbsent {
		st.LockWithoutState = true
		st.lockHeld = job.Lock == signalfs.LockHeld
	}
	if job.Found {
		s := job.State
		js := &JobStatus{Attempt: s.Attempt, Phase: string(s.Phase), Alive: job.Lock == signalfs.LockHeld, Liveness: s.Liveness,
			RestartPolicy: s.RestartPolicy, Version: s.Version, WaitFor: s.WaitFor, Started: s.Started, Updated: s.Updated}
		if s.Phase == signalfs.JobDone {
			js.ExitCode, js.Reason, js.Signal, js.Message = &s.ExitCode, s.Reason, s.Signal, s.Message
		}
		st.Job = js
		st.seen("job-signal", s.Version)
	}
	names, err := dir.SidecarNames()
	if err != nil {
		st.Errors = append(st.Errors, err.Error())
	}
	for _, name := range names {
		v := dir.Sidecar(name)
		switch v.Condition {
		case signalfs.SidecarUnreadable:
			st.Errors = append(st.Errors, v.Err.Error())
			continue
		case signalfs.SidecarMissing:
			continue // removed since listing
		}
		s := v.State
		ss := SidecarStatus{Name: s.Name, Phase: string(s.Phase), Alive: v.Alive, Restarts: s.Restarts, After: s.After,
			StopAfter: s.StopAfter, Version: s.Version, LastError: s.LastError, Updated: s.Updated, detail: v.Why(dir.Path())}
		if s.ExitCode >= 0 {
			ss.ExitCode = &s.ExitCode
		}
		st.Sidecars = append(st.Sidecars, ss)
		st.seen("sidecar-watch", s.Version)
	}
	if len(st.Versions["job-signal"]) > 0 && len(st.Versions["sidecar-watch"]) > 0 &&
		(len(st.Versions["sidecar-watch"]) > 1 || st.Versions["sidecar-watch"][0] != st.Versions["job-signal"][0]) {
		st.Warnings = append(st.Warnings, fmt.Sprintf("job-signal %s and sidecar-watch %s differ: install both from one image",
			strings.Join(st.Versions["job-signal"], ","), strings.Join(st.Versions["sidecar-watch"], ",")))
	}
	return st
}

// seen records a program's version, once.
func (st *Status) seen(program, version string) {
	version = cmp.Or(version, "unknown")
	if !slices.Contains(st.Versions[program], version) {
		st.Versions[program] = append(st.Versions[program], version)
	}
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
	if len(st.Versions) > 0 {
		fmt.Fprintf(tw, "\nversions: job-signal %s, sidecar-watch %s\n", joinOr(st.Versions["job-signal"]), joinOr(st.Versions["sidecar-watch"]))
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(tw, "warning: %s\n", w)
	}
	for _, e := range st.Errors {
		fmt.Fprintf(tw, "error: %s\n", e)
	}
	return tw.Flush()
}

func joinOr(versions []string) string {
	if len(versions) == 0 {
		return "(none seen)"
	}
	return strings.Join(versions, ", ")
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
	if !s.Alive {
		parts = append(parts, s.detail)
	} else if s.LastError != "" {
		parts = append(parts, s.LastError)
	}
	if len(s.After) > 0 {
		parts = append(parts, "after "+strings.Join(s.After, ","))
	}
	if len(s.StopAfter) > 0 {
		parts = append(parts, "stops after "+strings.Join(s.StopAfter, ","))
	}
	if s.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("last exit code %d", *s.ExitCode))
	}
	return strings.Join(parts, "; ")
}

func (st Status) age(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return st.now.Sub(t).Round(100 * time.Millisecond).String()
}
