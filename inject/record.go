package inject

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// record is what the annotation job-signal.dev/injected holds: enough to
// undo Inject exactly. Added items (volumes, the init container, mounts)
// are found by their names, which Inject refuses to reuse; what they
// replaced or whether a list was absent is kept here.
type record struct {
	Version    int               `json:"v"`
	Containers []containerRecord `json:"containers"`
	// NoVolumes and NoInit: spec.volumes / spec.initContainers were absent.
	NoVolumes bool `json:"noVolumes,omitempty"`
	NoInit    bool `json:"noInitContainers,omitempty"`
}

type containerRecord struct {
	Name string `json:"name"`
	// Command and Args as they were; null (absent) and [] are kept apart.
	Command []string `json:"command"`
	Args    []string `json:"args"`
	// NoMounts: volumeMounts was absent.
	NoMounts bool `json:"noMounts,omitempty"`
	// Sum is a digest of the injected command and args, to notice an edit
	// made after injection, which restoring would silently undo.
	Sum string `json:"sum"`
}

const recordVersion = 1

func (r record) encode() string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep '>' and '&' of shell commands readable
	if err := enc.Encode(r); err != nil {
		panic(err) // strings and bools only
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func decodeRecord(s string) (record, error) {
	var r record
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return r, fmt.Errorf("annotation %s is not what inject wrote (%v): restore the Pod from its source instead", AnnotationInjected, err)
	}
	if r.Version != recordVersion {
		return r, fmt.Errorf("annotation %s has version %d, this build knows %d: use the same job-signal version to uninject", AnnotationInjected, r.Version, recordVersion)
	}
	return r, nil
}

// commandSum is the digest stored in containerRecord.Sum.
func commandSum(c *corev1.Container) string {
	b, _ := json.Marshal([2][]string{c.Command, c.Args})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
