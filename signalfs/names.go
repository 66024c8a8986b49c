package signalfs

import "github.com/job-signal/job-signal/signalfs/sidecarname"

// ValidName reports whether name can name a sidecar; see sidecarname.Valid.
func ValidName(name string) error { return sidecarname.Valid(name) }
