package inject

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// AnnotationDefaultContainer is kubectl's own convention for "the container
// that matters" (kubectl logs and exec pick it); inject takes it as the job.
const AnnotationDefaultContainer = "kubectl.kubernetes.io/default-container"

// candidate is a container as the main-container choice sees it.
type candidate struct {
	name    string
	ignored bool
	sidecar string // the known sidecar it is ("" for none)
}

// chooseMain decides which container is the job: the one named by
// job-signal.dev/main, else by kubectl.kubernetes.io/default-container,
// else the one container that is not ignored and not a sidecar: a known
// one, or one the annotations s name as a sidecar (see namedSidecars).
// Anything else is a question only the author can answer: the error names
// the containers and the annotation to set. It never guesses.
func chooseMain(containers []candidate, s settings, defaultContainer string) (string, error) {
	if s.hasMain {
		if len(s.main) != 1 {
			return "", fmt.Errorf("annotation %s%s: name exactly one container (got %d): a Pod has one job; leave other containers that end by themselves to Kubernetes with %s%s",
				Prefix, keyMain, len(s.main), Prefix, keyIgnore)
		}
		return checkChosen(containers, s.main[0], Prefix+keyMain)
	}
	if defaultContainer != "" {
		return checkChosen(containers, defaultContainer, AnnotationDefaultContainer)
	}
	named := namedSidecars(s)
	var left, sidecars []string
	for _, c := range containers {
		switch {
		case c.ignored:
		case c.sidecar != "":
			sidecars = append(sidecars, fmt.Sprintf("%s (%s)", c.name, c.sidecar))
		case named[c.name] != "":
			sidecars = append(sidecars, fmt.Sprintf("%s (%s)", c.name, named[c.name]))
		default:
			left = append(left, c.name)
		}
	}
	switch len(left) {
	case 1:
		return left[0], nil
	case 0:
		if len(sidecars) == 0 {
			return "", fmt.Errorf("annotation %s%s names every container: nothing left to run as the main one", Prefix, keyIgnore)
		}
		return "", fmt.Errorf("every container is a sidecar (%s): say which one is the job with the annotation %s%s: NAME", strings.Join(sidecars, ", "), Prefix, keyMain)
	}
	return "", fmt.Errorf("which container is the job? %s could each be: set the annotation %s%s: NAME (or %s) on the Pod template",
		quoteList(left), Prefix, keyMain, AnnotationDefaultContainer)
}

// namedSidecars are the containers the annotations say are sidecars, each
// with the first annotation that says so: one that sets a sidecar's flag
// (job-signal.dev/after.config names config), and the containers named in
// the start and stop orders of sidecars (after.config: proxy names proxy)
// and in the job's wait-for. Each of these annotations is refused unless
// the container it names is a sidecar (plan.checkReferences), so they are
// evidence as strong as an image the known-sidecar table knows.
func namedSidecars(s settings) map[string]string {
	named := map[string]string{}
	say := func(name, why string) {
		if named[name] == "" {
			named[name] = why
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.sidecar)) {
		own := s.sidecar[name]
		for _, key := range slices.Sorted(maps.Keys(own)) {
			say(name, "annotation "+Prefix+key+"."+name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.sidecar)) {
		for _, key := range []string{"after", "stop-after"} {
			list, _ := names(s.sidecar[name][key]) // checked by parseSettings
			for _, n := range list {
				say(n, "named by "+Prefix+key+"."+name)
			}
		}
	}
	for _, n := range s.waitFor {
		say(n, "named by "+Prefix+"wait-for")
	}
	return named
}

// checkChosen refuses an annotation naming a container that cannot be the
// job.
func checkChosen(containers []candidate, name, annotation string) (string, error) {
	i := slices.IndexFunc(containers, func(c candidate) bool { return c.name == name })
	switch {
	case i < 0:
		return "", fmt.Errorf("annotation %s: %q is not a container of this Pod", annotation, name)
	case containers[i].ignored:
		return "", fmt.Errorf("annotation %s: %q is ignored (%s%s)", annotation, name, Prefix, keyIgnore)
	}
	return name, nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
