package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMergeInto(t *testing.T) {
	file := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	old := strings.Join([]string{
		"# Benchmarks", "", "Written by `make bench` on 2026-11-24 23:49 UTC, in 12m2s.", "",
		"| measurement | runs | result | target | vs target | reference |", "|---|---|---|---|---|---|",
		"| a | 1 | old a |  |  |  |", "| b | 1 | old b |  |  |  |", "| c | 1 | old c |  |  |  |", "",
		"Cluster: words.", "", "## Method", "", "- Binaries: built.", "- b: old note on b.", "",
		"## Protocol micro-benchmarks", "", "- not a note: kept.", "",
	}, "\n")
	if err := os.WriteFile(file, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	partial := strings.Join([]string{
		"# Benchmarks", "", "Written by `make bench` on 2026-11-26 14:00 UTC, in 1m.", "",
		"| measurement | runs | result | target | vs target | reference |", "|---|---|---|---|---|---|",
		"| b | 2 | new b |  |  |  |", "| b2 | 2 | new b2 |  |  |  |", "",
		"Webhook at scale, v1: new words.", "", "A sidecar that ignores SIGTERM, v1: words.", "", "## Method", "", "- Binaries: built.", "- b: new note on b.", "- b2: note on b2.", "",
	}, "\n")
	if err := mergeInto(file, partial); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(file)
	want := strings.Join([]string{
		"# Benchmarks", "", "Written by `make bench` on 2026-11-24 23:49 UTC, in 12m2s; rows of `make bench` with `-only ... -merge` replaced since (the last: 2026-11-26 14:00 UTC).", "",
		"| measurement | runs | result | target | vs target | reference |", "|---|---|---|---|---|---|",
		"| a | 1 | old a |  |  |  |", "| b | 2 | new b |  |  |  |", "| b2 | 2 | new b2 |  |  |  |", "| c | 1 | old c |  |  |  |", "",
		"Cluster: words.", "", "Webhook at scale, v1: new words.", "", "A sidecar that ignores SIGTERM, v1: words.", "", "## Method", "", "- Binaries: built.", "- b: new note on b.", "- b2: note on b2.", "",
		"## Protocol micro-benchmarks", "", "- not a note: kept.", "",
	}, "\n")
	if string(got) != want {
		t.Errorf("merged:\n%s\nwant:\n%s", got, want)
	}
}
