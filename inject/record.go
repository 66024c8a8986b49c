package inject

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// record is what the annotation job-signal.dev/injected holds: enough to
// undo Inject exactly. Added items (volumes, the init container, mounts)
// are found by their names, which Inject refuses to reuse; what was there
// before (absent, null, a list) and the original command lines are kept
// here.
type record struct {
	Version int `json:"v"`
	// Form and Reason: the form chosen and why, when a mode other than
	// pair chose it.
	Form       Form              `json:"form,omitempty"`
	Reason     string            `json:"reason,omitempty"`
	Containers []containerRecord `json:"containers,omitempty"`
	// Moved: the native form's sidecars, moved to initContainers.
	Moved []movedRecord `json:"moved,omitempty"`
	// Signals: the sidecars' images' STOPSIGNALs the choice of form read,
	// by container, so that injecting again needs no registry.
	Signals map[string]string `json:"signals,omitempty"`
	// Was says, by place ("volumes", "initContainers", "metadata",
	// "annotations"), that it was absent ("absent") or null ("null")
	// before Inject added to it; a list or object that was there is not
	// named.
	Was map[string]string `json:"was,omitempty"`
	// Text keeps, by place, the source text of a value Inject replaced
	// when the plugin could not write the value back the same way
	// (spacing, comments, quoting): uninject puts it back as it was.
	Text map[string]string `json:"text,omitempty"`
}

type containerRecord struct {
	Name string `json:"name"`
	// How the command line moved (see commandOps): "move", "merge",
	// "prepend" or "set".
	How string `json:"how"`
	// Command and Args as they were; null and [] are kept apart, Was
	// says which were absent.
	Command []string `json:"command"`
	Args    []string `json:"args"`
	// Was: "command", "args" and "volumeMounts" that were absent or null.
	Was map[string]string `json:"was,omitempty"`
	// N is how many words Inject put in front of args.
	N int `json:"n,omitempty"`
	// Sum is a digest of the injected command and args, to notice an edit
	// made after injection, which restoring would silently undo.
	Sum string `json:"sum"`
}

// movedRecord is one container the native form moved from containers to
// initContainers.
type movedRecord struct {
	Name string `json:"name"`
	// Index is its index in containers before.
	Index int `json:"index"`
	// Added lists the members added to it, in order: restartPolicy,
	// startupProbe, lifecycle or lifecycle/preStop.
	Added []string `json:"added"`
	// Was: added members that were null before.
	Was map[string]string `json:"was,omitempty"`
}

// recordVersion is the pair's record; nativeVersion the native form's,
// which builds that know only the pair refuse by its version.
const (
	recordVersion = 2
	nativeVersion = 3
)

func (r record) encode() string {
	b, err := marshal(r)
	if err != nil {
		panic(err) // strings, ints and maps of strings only
	}
	return string(b)
}

func decodeRecord(s string) (record, error) {
	var r record
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return r, fmt.Errorf("annotation %s is not what inject wrote (%v): restore the Pod from its source instead", AnnotationInjected, err)
	}
	if r.Version != recordVersion && r.Version != nativeVersion || (r.Version == nativeVersion) != (r.Form == FormNative) {
		return r, fmt.Errorf("annotation %s has version %d, this build knows %d and %d: use the same job-signal version to uninject", AnnotationInjected, r.Version, recordVersion, nativeVersion)
	}
	return r, nil
}

// commandSum is the digest stored in containerRecord.Sum.
func commandSum(command, args []string) string {
	b, _ := json.Marshal([2][]string{command, args})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func (s presence) String() string {
	switch s {
	case absent:
		return "absent"
	case null:
		return "null"
	}
	return ""
}
