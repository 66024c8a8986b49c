package signalfs

import (
	"fmt"
	"strings"
)

// MaxNameLen is the longest sidecar name: a DNS label, like a container name.
const MaxNameLen = 63

// ValidName reports whether name can name a sidecar: a DNS label
// ([a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters), the same rule
// Kubernetes applies to container names. Names become part of file names, so
// this rule is also what keeps them from escaping the directory.
func ValidName(name string) error {
	if name == "" {
		return fmt.Errorf("empty name")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("name %q is %d characters long; at most %d allowed", clip(name), len(name), MaxNameLen)
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

// ParseNames splits a comma-separated list of sidecar names, as given to
// --wait-for, --after and --stop-after, and validates each one. Empty
// elements (from "a,,b" or a trailing comma) are rejected rather than
// ignored: they are almost always a typo.
func ParseNames(list []string) ([]string, error) {
	names := []string{} // never nil: logged as a list, never as null
	seen := map[string]bool{}
	for _, item := range list {
		if strings.TrimSpace(item) == "" {
			continue // an empty flag or environment variable: no names
		}
		for _, name := range strings.Split(item, ",") {
			name = strings.TrimSpace(name)
			if err := ValidName(name); err != nil {
				return nil, err
			}
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	if joined := len(strings.Join(names, ",")); joined > maxValueLen {
		return nil, fmt.Errorf("%d names take %d bytes when joined; at most %d fit in a state file", len(names), joined, maxValueLen)
	}
	return names, nil
}
