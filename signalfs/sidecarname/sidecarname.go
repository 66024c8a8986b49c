// Package sidecarname holds the protocol's rule for sidecar names and lists
// of them. It needs nothing but the standard library, so the kubectl plugin
// (which runs on laptops, where package signalfs's flock and openat do not
// build) checks names exactly as job-signal and sidecar-watch will.
package sidecarname

import (
	"fmt"
	"strings"
)

const (
	// MaxLen is the longest sidecar name: a DNS label, like a container name.
	MaxLen = 63
	// MaxListLen is the longest list of names, joined by commas: the
	// longest value a line of a state file holds.
	MaxListLen = 1024
)

// Valid reports whether name can name a sidecar: a DNS label
// ([a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters), the same rule
// Kubernetes applies to container names. Names become part of file names, so
// this rule is also what keeps them from escaping the directory.
func Valid(name string) error {
	if name == "" {
		return fmt.Errorf("empty name")
	}
	if len(name) > MaxLen {
		return fmt.Errorf("name %q is %d characters long; at most %d allowed", clip(name), len(name), MaxLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(name)-1) {
			return fmt.Errorf("name %q is not a DNS label: use lower-case letters, digits and '-', starting and ending with a letter or digit", clip(name))
		}
	}
	return nil
}

// ParseList splits comma-separated lists of sidecar names, as given to
// --wait-for, --after and --stop-after (each flag may be repeated), and
// validates each name. Empty elements (from "a,,b" or a trailing comma) are
// rejected rather than ignored: they are almost always a typo. Repeats are
// dropped.
func ParseList(list []string) ([]string, error) {
	names := []string{} // never nil: logged as a list, never as null
	seen := map[string]bool{}
	for _, item := range list {
		if strings.TrimSpace(item) == "" {
			continue // an empty flag or environment variable: no names
		}
		for _, name := range strings.Split(item, ",") {
			name = strings.TrimSpace(name)
			if err := Valid(name); err != nil {
				return nil, err
			}
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	if joined := len(strings.Join(names, ",")); joined > MaxListLen {
		return nil, fmt.Errorf("%d names take %d bytes when joined; at most %d fit in a state file", len(names), joined, MaxListLen)
	}
	return names, nil
}

// clip shortens a name for an error message, as package signalfs does its
// values (this package keeps to the standard library).
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
