package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// parseDurations reads numbers separated by spaces, in unit.
func parseDurations(s string, unit time.Duration) []time.Duration {
	var out []time.Duration
	for _, f := range strings.Fields(s) {
		n, _ := strconv.Atoi(f)
		out = append(out, time.Duration(n)*unit)
	}
	return out
}

// row is one line of the table.
type row struct {
	name      string
	runs      int
	p50, p99  time.Duration
	value     string // instead of p50/p99
	target    string
	reference string
	note      string
	check     func(row) (string, bool)
}

func newRow(name string, samples []time.Duration) row {
	sorted := append([]time.Duration(nil), samples...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return row{name: name, runs: len(sorted), p50: percentile(sorted, 50), p99: percentile(sorted, 99)}
}

// percentile by nearest rank on sorted samples.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// sample announces title and times once for each of runs runs (scaled),
// naming title in its error.
func (b *bench) sample(title string, runs int, once func(run int) (time.Duration, error)) ([]time.Duration, error) {
	fmt.Fprintln(os.Stderr, "bench:", title)
	var samples []time.Duration
	for run := 0; run < b.runs(runs); run++ {
		d, err := once(run)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", title, err)
		}
		samples = append(samples, d)
	}
	return samples, nil
}

// find is the first row measured so far whose name starts with prefix.
func (b *bench) find(prefix string) (row, bool) {
	for _, r := range b.rows {
		if strings.HasPrefix(r.name, prefix) {
			return r, true
		}
	}
	return row{}, false
}
