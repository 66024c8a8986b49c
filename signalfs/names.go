package signalfs

import "github.com/job-signal/job-signal/signalfs/sidecarname"

// MaxNameLen is the longest sidecar name: a DNS label, like a container name.
const MaxNameLen = sidecarname.MaxLen

// ValidName reports whether name can name a sidecar; see sidecarname.Valid.
func ValidName(name string) error { return sidecarname.Valid(name) }

// ParseNames splits and validates comma-separated lists of sidecar names,
// as given to --wait-for, --after and --stop-after; see
// sidecarname.ParseList.
func ParseNames(list []string) ([]string, error) { return sidecarname.ParseList(list) }
