package inject

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/signalfs/sidecarname"
)

// role is what Inject does with one of the Pod's containers.
type role int

const (
	roleSidecar role = iota // wrapped by sidecar-watch
	roleMain                // wrapped by job-signal
	roleIgnored             // left as it is (job-signal.dev/ignore)
)

// plan is the decision for one Pod: who is main, who are the sidecars,
// and the flags each gets.
type plan struct {
	main         string
	roles        map[string]role
	sidecars     []string // in container order
	mainFlags    []string
	sidecarFlags map[string][]string
	warnings     []string
}

// makePlan checks the settings against the Pod's containers and decides.
// Every error names the annotation or field to fix.
func makePlan(spec *corev1.PodSpec, s settings) (plan, error) {
	p := plan{roles: map[string]role{}, sidecarFlags: map[string][]string{}}
	if len(spec.Containers) == 0 {
		return p, errors.New("spec.containers is empty")
	}
	var restartFlags []string
	switch spec.RestartPolicy {
	case corev1.RestartPolicyNever:
	case corev1.RestartPolicyOnFailure:
		restartFlags = []string{"--restart-policy", "OnFailure"}
	case "":
		return p, errors.New("spec.restartPolicy is not set, and a Pod's default is Always: job-signal is for Pods that end; set Never or OnFailure (a Job's template must)")
	default:
		return p, fmt.Errorf("spec.restartPolicy is %s: job-signal is for Pods that end; set Never or OnFailure", spec.RestartPolicy)
	}
	native := map[string]bool{}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			native[c.Name] = true
		}
	}
	// what explains why name cannot be used where a sidecar is expected.
	what := func(name string) string {
		r, ok := p.roles[name]
		switch {
		case native[name]:
			return "is a native sidecar (an init container with restartPolicy Always): Kubernetes starts and stops it, job-signal does not"
		case !ok:
			return "is not a container of this Pod"
		case r == roleMain:
			return "is the main container"
		case r == roleIgnored:
			return "is ignored (" + Prefix + keyIgnore + ")"
		}
		return ""
	}
	for _, c := range spec.Containers {
		p.roles[c.Name] = roleSidecar
	}
	for _, name := range s.ignore {
		if _, ok := p.roles[name]; !ok {
			return p, fmt.Errorf("annotation %s%s: %q %s", Prefix, keyIgnore, name, what(name))
		}
		p.roles[name] = roleIgnored
	}
	switch {
	case s.hasMain && len(s.main) != 1:
		return p, fmt.Errorf("annotation %s%s: name exactly one container (got %d): a Pod has one job; leave other containers that end by themselves to Kubernetes with %s%s",
			Prefix, keyMain, len(s.main), Prefix, keyIgnore)
	case s.hasMain:
		p.main = s.main[0]
		if r, ok := p.roles[p.main]; !ok || r == roleIgnored {
			return p, fmt.Errorf("annotation %s%s: %q %s", Prefix, keyMain, p.main, what(p.main))
		}
	default:
		for _, c := range spec.Containers {
			if p.roles[c.Name] != roleIgnored {
				p.main = c.Name
				break
			}
		}
		if p.main == "" {
			return p, fmt.Errorf("annotation %s%s names every container: nothing left to run as the main one", Prefix, keyIgnore)
		}
	}
	p.roles[p.main] = roleMain
	for _, c := range spec.Containers {
		if p.roles[c.Name] == roleSidecar {
			p.sidecars = append(p.sidecars, c.Name)
		}
	}
	isSidecar := func(name string) bool { return p.roles[name] == roleSidecar && !native[name] }
	for name := range s.sidecar {
		if !isSidecar(name) {
			return p, fmt.Errorf("annotations %s*.%s: %q %s", Prefix, name, name, what(name))
		}
	}
	refs := func(annotation, self string, list []string) error {
		for _, name := range list {
			if name == self {
				return fmt.Errorf("annotation %s: %q names its own container", annotation, name)
			}
			if !isSidecar(name) {
				return fmt.Errorf("annotation %s: %q %s", annotation, name, what(name))
			}
		}
		return nil
	}
	waitFor := p.sidecars
	if s.hasWaitFor {
		waitFor = s.waitFor
		if err := refs(Prefix+"wait-for", "", waitFor); err != nil {
			return p, err
		}
	}
	if len(waitFor) > 0 {
		p.mainFlags = append(p.mainFlags, "--wait-for", strings.Join(waitFor, ","))
	}
	if v, ok := s.main1["ready-timeout"]; ok {
		p.mainFlags = append(p.mainFlags, "--ready-timeout", v)
	}
	p.mainFlags = append(p.mainFlags, restartFlags...)

	after, stopAfter := map[string][]string{}, map[string][]string{}
	for _, name := range p.sidecars {
		own := s.sidecar[name]
		ready := 0
		flags := []string{"--name", name}
		for _, o := range Options {
			if o.Main {
				continue
			}
			v, ok := own[o.Key]
			if !ok && o.PodWide {
				v, ok = s.podWide[o.Key]
			}
			if !ok {
				continue
			}
			annotation := Prefix + o.Key + "." + name
			switch o.Key {
			case "ready-tcp", "ready-http", "ready-file":
				if ready++; ready > 1 {
					return p, fmt.Errorf("annotations %sready-*.%s: give at most one of ready-tcp, ready-http and ready-file", Prefix, name)
				}
			case "after", "stop-after":
				list, _ := names(v)
				if err := refs(annotation, name, list); err != nil {
					return p, err
				}
				if o.Key == "after" {
					after[name] = list
				} else {
					stopAfter[name] = list
				}
			}
			flags = append(flags, o.Flag, v)
		}
		p.sidecarFlags[name] = flags
	}
	if cycle := sidecarname.FindCycle(p.sidecars, lookup(after)); cycle != nil {
		return p, fmt.Errorf("annotations %safter.*: start order has a cycle: %s", Prefix, strings.Join(cycle, " after "))
	}
	if cycle := sidecarname.FindCycle(p.sidecars, lookup(stopAfter)); cycle != nil {
		return p, fmt.Errorf("annotations %sstop-after.*: stop order has a cycle: %s", Prefix, strings.Join(cycle, " stops after "))
	}
	p.warnings = append(p.warnings, budgetWarnings(spec, p.sidecars, s, stopAfter)...)
	return p, nil
}

// lookup reads an ordering's edges from a map.
func lookup(edges map[string][]string) func(string) []string {
	return func(name string) []string { return edges[name] }
}
