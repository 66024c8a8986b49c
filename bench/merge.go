package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// mergeRows (-merge): a partial run (-only) puts its rows into the
// report instead of printing them only.
var mergeRows bool

// mergeInto puts what a partial run measured into the report in file:
// its table rows, the notes on them (one line each, "- NAME: ...") and
// its "Webhook at scale" and "A sidecar that ignores SIGTERM" paragraphs. A line about the same measurement is
// replaced; a new one goes after the last line of its kind (a paragraph:
// before "## Method"). The header says when rows were last replaced.
func mergeInto(file, partial string) error {
	old, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("-merge: %w", err)
	}
	lines := strings.Split(string(old), "\n")
	var names []string
	for _, l := range strings.Split(partial, "\n") {
		if k, kind := mergeKey(l, nil); kind == "row" {
			names = append(names, k)
		}
	}
	placed := map[string]int{} // by kind: where the partial's last line of it went
	for _, l := range strings.Split(partial, "\n") {
		key, kind := mergeKey(l, names)
		if kind == "" {
			continue
		}
		at, replaced := -1, false
		for i, o := range lines {
			if strings.HasPrefix(o, "## Method") && kind == "analysis" && at < 0 {
				at = i - 1 // before the heading and its blank line
			}
			if strings.HasPrefix(o, "## Protocol") {
				break
			}
			k, kd := mergeKey(o, names)
			switch {
			case kd == kind && kind == "analysis":
				at = i + 1 // after that paragraph, before its blank line
			case kd == kind || kind == "note" && strings.HasPrefix(o, "- "):
				at = i
			}
			if kd == kind && k == key {
				lines[i], replaced = l, true
				placed[kind] = i
				break
			}
		}
		if p, ok := placed[kind]; ok && !replaced && kind != "analysis" {
			at = p // next to the line before it in the partial report
		}
		switch {
		case replaced || at < 0:
		case kind == "analysis":
			lines = slices.Insert(lines, at, "", l)
		default:
			lines = slices.Insert(lines, at+1, l)
			placed[kind] = at + 1
		}
	}
	for i, l := range lines {
		if before, ok := strings.CutPrefix(l, "Written by `make bench`"); ok {
			before, _, _ = strings.Cut(before, "; rows of `make bench`")
			lines[i] = "Written by `make bench`" + strings.TrimSuffix(before, ".") +
				fmt.Sprintf("; rows of `make bench` with `-only ... -merge` replaced since (the last: %s).", partialDate(partial))
		}
	}
	return os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644)
}

// mergeKey says what a report line is (a table row, a note on one of the
// rows names, an analysis paragraph) and what it is about.
func mergeKey(line string, names []string) (key, kind string) {
	switch {
	case strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| measurement "):
		name, _, _ := strings.Cut(line[2:], " | ")
		return name, "row"
	case strings.HasPrefix(line, "- "):
		for _, n := range names {
			if strings.HasPrefix(line, "- "+n+": ") {
				return n, "note"
			}
		}
	case strings.HasPrefix(line, "Webhook at scale"), strings.HasPrefix(line, "A sidecar that ignores SIGTERM"):
		name, _, _ := strings.Cut(line, ":")
		return name, "analysis"
	}
	return "", ""
}

func partialDate(report string) string {
	_, rest, _ := strings.Cut(report, "Written by `make bench` on ")
	date, _, _ := strings.Cut(rest, ",")
	return date
}
