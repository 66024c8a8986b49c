package sidecarwatch

import (
	"os"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/signalfs"
)

// transitionRow is one row of ARCHITECTURE.md's table of sidecar-watch's
// states and transitions.
type transitionRow struct {
	event   event
	from    []stage
	to      string // a stage, or "same"
	records string // a phase, or "same"
	runs    string // what runs after, or "same"
	where   string // the file that decides it
}

// transitionTable reads the table from ARCHITECTURE.md: the drawing people
// read is the specification next is held to.
func transitionTable(t *testing.T) []transitionRow {
	t.Helper()
	doc, err := os.ReadFile("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, found := strings.Cut(string(doc), "| event | from | to | records | runs | decided in |\n|---|---|---|---|---|---|\n")
	if !found {
		t.Fatal("ARCHITECTURE.md: no table of sidecar-watch's transitions")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	var rows []transitionRow
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 6 {
			t.Fatalf("ARCHITECTURE.md: a row of the transitions table without 6 cells: %s", line)
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(cells[0], "`"), "`")
		r := transitionRow{event: -1, to: cells[2], records: cells[3], runs: cells[4], where: cells[5]}
		for e := range event(len(eventNames)) {
			if e.String() == name {
				r.event = e
			}
		}
		if r.event < 0 {
			t.Fatalf("ARCHITECTURE.md: unknown event %q", name)
		}
		if cells[1] == "any but stopped, failed" {
			for s := range stage(len(stageNames)) {
				if !s.finished() {
					r.from = append(r.from, s)
				}
			}
		} else {
			for _, n := range strings.Split(cells[1], ", ") {
				r.from = append(r.from, stageNamed(t, n))
			}
		}
		if r.to != "same" {
			stageNamed(t, r.to)
		}
		if r.runs != "same" {
			runsNamed(t, r.runs)
		}
		if r.where == "" {
			t.Errorf("ARCHITECTURE.md: event %s: no file that decides it", name)
		}
		rows = append(rows, r)
	}
	return rows
}

func runsNamed(t *testing.T, name string) runs {
	for r := range runs(len(runsNames)) {
		if r.String() == name {
			return r
		}
	}
	t.Fatalf("ARCHITECTURE.md: unknown runs %q", name)
	return 0
}

func stageNamed(t *testing.T, name string) stage {
	for s := range stage(len(stageNames)) {
		if s.String() == name {
			return s
		}
	}
	t.Fatalf("ARCHITECTURE.md: unknown stage %q", name)
	return 0
}

// TestNext holds next to the table for every stage, event, recorded
// phase, terminating, what runs and failing: what the table allows moves
// as it says, and nothing else is allowed.
func TestNext(t *testing.T) {
	rows := transitionTable(t)
	if len(rows) != len(eventNames) {
		t.Errorf("the table has %d events, state.go %d", len(rows), len(eventNames))
	}
	phases := []signalfs.SidecarPhase{signalfs.SidecarWaiting, signalfs.SidecarStarting, signalfs.SidecarReady,
		signalfs.SidecarRestarting, signalfs.SidecarStopping}
	for _, r := range rows {
		for _, s := range allLives(phases) {
			got, err := s.next(r.event)
			allowed := false
			for _, f := range r.from {
				allowed = allowed || f == s.stage
			}
			if !allowed {
				if err == nil || got != s {
					t.Errorf("%+v, %s: got %+v, %v; want refused, unchanged", s, r.event, got, err)
				}
				continue
			}
			want := s
			if r.to != "same" {
				want.stage = stageNamed(t, r.to)
			}
			if r.records != "same" {
				want.recorded = signalfs.SidecarPhase(r.records)
			}
			if r.runs != "same" {
				want.runs = runsNamed(t, r.runs)
			}
			want.terminating = s.terminating || r.event == evTerminating
			want.failing = s.failing || r.event == evFailing
			if err != nil || got != want {
				t.Errorf("%+v, %s: got %+v, %v; want %+v", s, r.event, got, err, want)
			}
		}
	}
}

// allLives is every life: each stage, recorded phase, terminating, what
// runs and failing.
func allLives(phases []signalfs.SidecarPhase) []life {
	var all []life
	for st := range stage(len(stageNames)) {
		for _, recorded := range phases {
			for r := range runs(len(runsNames)) {
				for _, terminating := range []bool{false, true} {
					for _, failing := range []bool{false, true} {
						all = append(all, life{stage: st, recorded: recorded, terminating: terminating, runs: r, failing: failing})
					}
				}
			}
		}
	}
	return all
}

// TestNewLife: the recorded phase a sidecar-watch starts with.
func TestNewLife(t *testing.T) {
	if got := newLife(true); got != (life{stage: waiting, recorded: signalfs.SidecarWaiting}) {
		t.Errorf("with --after: %+v", got)
	}
	if got := newLife(false); got != (life{stage: waiting, recorded: signalfs.SidecarStarting}) {
		t.Errorf("without --after: %+v", got)
	}
}
