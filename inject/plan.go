package inject

import (
	"errors"
	"fmt"
	"maps"
	"slices"
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

// plan is the decision for one Pod that needs no image: who is main, who
// are the sidecars, what the manifest already says about each. The flags
// are completed once the images are known (see flags).
type plan struct {
	spec     *corev1.PodSpec
	s        settings
	main     string
	roles    map[string]role
	sidecars []string // in container order
	native   []string // native sidecars (nativeSidecars)
	restart  []string // job-signal's flags for the Pod's restartPolicy
	known    map[string]*KnownSidecar
	probes   map[string]*derived // readiness read from each sidecar's probes
	after    map[string][]string
	stop     map[string][]string // --stop-after
	// exitCodes: the containers the Job's podFailurePolicy judges by
	// exit code (Target.ExitCodeRules and the annotation, read once).
	exitCodes judged
	// probeErr: a sidecar's probe that sidecar-watch cannot run (the
	// first); an error for the pair only, as the kubelet runs it in the
	// native form.
	probeErr error
}

// makePlan checks the settings against the Pod's containers and decides.
// Every error names the annotation or field to fix.
func makePlan(spec *corev1.PodSpec, s settings, defaultContainer string) (*plan, error) {
	p := &plan{spec: spec, s: s, roles: map[string]role{}, known: map[string]*KnownSidecar{}, probes: map[string]*derived{}}
	if len(spec.Containers) == 0 {
		return nil, errors.New("spec.containers is empty")
	}
	var err error
	if p.restart, err = restartFlags(spec.RestartPolicy); err != nil {
		return nil, err
	}
	p.native = nativeSidecars(spec)
	if err := p.chooseRoles(defaultContainer); err != nil {
		return nil, err
	}
	if err := p.checkReferences(); err != nil {
		return nil, err
	}
	for _, name := range p.sidecars {
		c := container(spec, name)
		if hasReadiness(s.sidecar[name]) {
			continue // the annotation decides
		}
		d, err := readinessFromProbes(c)
		if err != nil {
			if p.probeErr == nil {
				p.probeErr = err
			}
			continue
		}
		if d != nil {
			p.probes[name] = d
		}
	}
	return p, nil
}

// restartFlags decides job-signal's flags for the Pod's restartPolicy.
func restartFlags(policy corev1.RestartPolicy) ([]string, error) {
	switch policy {
	case corev1.RestartPolicyNever:
		return nil, nil
	case corev1.RestartPolicyOnFailure:
		return []string{"--restart-policy", "OnFailure"}, nil
	case "":
		return nil, errors.New("spec.restartPolicy is not set, and a Pod's default is Always: job-signal is for Pods that end; set Never or OnFailure (a Job's template must)")
	}
	return nil, fmt.Errorf("spec.restartPolicy is %s: job-signal is for Pods that end; set Never or OnFailure", policy)
}

// nativeSidecars are the names of the init containers with restartPolicy
// Always, which Kubernetes starts and stops itself, in order.
func nativeSidecars(spec *corev1.PodSpec) []string {
	var names []string
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			names = append(names, c.Name)
		}
	}
	return names
}

// chooseRoles marks the ignored containers, chooses the main one and makes
// the others sidecars.
func (p *plan) chooseRoles(defaultContainer string) error {
	for _, c := range p.spec.Containers {
		p.roles[c.Name] = roleSidecar
		p.known[c.Name] = knownSidecar(c.Image)
	}
	for _, name := range p.s.ignore {
		if _, ok := p.roles[name]; !ok {
			return fmt.Errorf("annotation %s%s: %q %s", Prefix, keyIgnore, name, p.what(name))
		}
		p.roles[name] = roleIgnored
	}
	var candidates []candidate
	for _, c := range p.spec.Containers {
		candidates = append(candidates, candidate{name: c.Name, ignored: p.roles[c.Name] == roleIgnored,
			sidecar: sidecarOf(&c, p.known[c.Name])})
	}
	main, err := chooseMain(candidates, p.s, defaultContainer)
	if err != nil {
		return err
	}
	p.main = main
	p.roles[main] = roleMain
	for _, c := range p.spec.Containers {
		if p.roles[c.Name] == roleSidecar {
			p.sidecars = append(p.sidecars, c.Name)
		}
	}
	return nil
}

// what explains why name cannot be used where a sidecar is expected.
func (p *plan) what(name string) string {
	r, ok := p.roles[name]
	switch {
	case slices.Contains(p.native, name):
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

func (p *plan) isSidecar(name string) bool {
	return p.roles[name] == roleSidecar && !slices.Contains(p.native, name)
}

// checkReferences checks every annotation that names containers against
// the roles, and the start and stop orders for cycles.
func (p *plan) checkReferences() error {
	for _, name := range slices.Sorted(maps.Keys(p.s.sidecar)) {
		if !p.isSidecar(name) {
			return fmt.Errorf("annotations %s*.%s: %q %s", Prefix, name, name, p.what(name))
		}
	}
	if p.s.hasWaitFor {
		if err := p.refs(Prefix+"wait-for", "", p.s.waitFor); err != nil {
			return err
		}
	}
	p.after, p.stop = map[string][]string{}, map[string][]string{}
	for _, name := range p.sidecars {
		if n := readinessCount(p.s.sidecar[name]); n > 1 {
			return fmt.Errorf("annotations %sready-*.%s: give at most one of ready-tcp, ready-http, ready-file and ready-exec", Prefix, name)
		}
		for key, order := range map[string]map[string][]string{"after": p.after, "stop-after": p.stop} {
			v, ok := p.s.sidecar[name][key]
			if !ok {
				continue
			}
			list, _ := names(v)
			if err := p.refs(Prefix+key+"."+name, name, list); err != nil {
				return err
			}
			order[name] = list
		}
	}
	if cycle := sidecarname.FindCycle(p.sidecars, lookup(p.after)); cycle != nil {
		return fmt.Errorf("annotations %safter.*: start order has a cycle: %s", Prefix, strings.Join(cycle, " after "))
	}
	if cycle := sidecarname.FindCycle(p.sidecars, lookup(p.stop)); cycle != nil {
		return fmt.Errorf("annotations %sstop-after.*: stop order has a cycle: %s", Prefix, strings.Join(cycle, " stops after "))
	}
	return nil
}

func (p *plan) refs(annotation, self string, list []string) error {
	for _, name := range list {
		if name == self {
			return fmt.Errorf("annotation %s: %q names its own container", annotation, name)
		}
		if !p.isSidecar(name) {
			return fmt.Errorf("annotation %s: %q %s", annotation, name, p.what(name))
		}
	}
	return nil
}

// lookup reads an ordering's edges from a map.
func lookup(edges map[string][]string) func(string) []string {
	return func(name string) []string { return edges[name] }
}

func hasReadiness(own map[string]string) bool { return readinessCount(own) > 0 }

func readinessCount(own map[string]string) int {
	n := 0
	for _, k := range []string{"ready-tcp", "ready-http", "ready-file", "ready-exec"} {
		if _, ok := own[k]; ok {
			n++
		}
	}
	return n
}

func container(spec *corev1.PodSpec, name string) *corev1.Container {
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	return nil
}
