package inject

import (
	"errors"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ImageConfig is what an image says to run when the Pod does not, its
// ENTRYPOINT and CMD, and its STOPSIGNAL, from the image's config in the
// registry.
type ImageConfig struct {
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	StopSignal string   `json:"stopSignal,omitempty"`
}

// NeedsImage reports whether c's command line depends on its image: it has
// no command of its own (only args, or nothing).
func NeedsImage(c *corev1.Container) bool { return len(c.Command) == 0 }

// errNoCommand is returned when neither the Pod nor the image says what to
// run: the kubelet would fail the container with "no command specified".
var errNoCommand = errors.New("no command: the container has neither command nor args, and its image has neither ENTRYPOINT nor CMD")

// Effective is the command line the container runs, in the form the
// container's args take (so the kubelet's $(VAR) expansion applies to it
// exactly as before). It follows the rule the kubelet and the container
// runtime apply together:
//
//   - command set: command + args; the image's ENTRYPOINT and CMD are ignored
//     (even when args is empty);
//   - only args set: ENTRYPOINT + args (CMD ignored);
//   - neither: ENTRYPOINT + CMD.
//
// "Set" means non-empty: an empty list is not sent to the runtime at all.
// An ENTRYPOINT of [""] counts as none, as in containerd. The kubelet
// expands $(VAR) in command and args but never in the image's ENTRYPOINT
// and CMD, so the parts taken from the image have '$' doubled ("$$" expands
// to "$"): they reach the process unchanged once moved into args.
func Effective(c *corev1.Container, img *ImageConfig) ([]string, error) {
	if !NeedsImage(c) {
		return slices.Concat(c.Command, c.Args), nil
	}
	if img == nil {
		return nil, errors.New("its image's ENTRYPOINT is needed (the container has no command) but was not looked up")
	}
	var line []string
	if !(len(img.Entrypoint) == 1 && img.Entrypoint[0] == "") {
		line = append(line, escapeAll(img.Entrypoint)...)
	}
	if len(c.Args) > 0 {
		line = append(line, c.Args...)
	} else {
		line = append(line, escapeAll(img.Cmd)...)
	}
	if len(line) == 0 {
		return nil, errNoCommand
	}
	return line, nil
}

// escapeAll protects strings from the kubelet's $(VAR) expansion.
func escapeAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.ReplaceAll(s, "$", "$$")
	}
	return out
}
