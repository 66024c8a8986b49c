// Prepare, the plan and its injection: long because they are the one path both front ends take, in order.

package inject

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Plan is a Pod template read and decided once: which container is the
// job, which are sidecars, what their probes and arguments already say,
// which images must be looked up. Inject completes it with those images.
type Plan struct {
	t *template
	p *plan
	// prev is a previous injection's undoing: its ops (nil for a template
	// not injected before), command lines, texts and STOPSIGNALs.
	prev undone
	// orig is the template without job-signal (the input, or the input
	// with a previous injection undone).
	orig    *template
	nothing string
	takeOut string // why a template injected before needs job-signal no more
	target  Target
	choice  choice // decided without images (see choose)
}

// Need is a container whose command line comes from its image.
type Need struct {
	Container string
	Image     string
	// needsCmd: the container has neither command nor args, so its
	// image's CMD is part of its command line too.
	needsCmd bool
}

// Result is what Inject or Uninject decided: the changes, as JSON Patch
// operations on the template, and what to tell the user.
type Result struct {
	Ops      []Op
	Warnings []string
	// Form is the form chosen (empty when nothing changed), and Reason
	// why, in one short line: for logs and the record; Class is the
	// reason's class, a bounded word for a metric label.
	Form   Form
	Reason string
	Class  ReasonClass
}

// Injected reports whether annotations carry Inject's record.
func Injected(annotations map[string]string) bool {
	_, ok := annotations[AnnotationInjected]
	return ok
}

// Prepare reads a Pod template (the JSON of an object with metadata and
// spec: a Pod, or a Job's spec.template) and decides what Inject does
// with it. A template injected before is decided on as it was before.
func Prepare(data []byte) (*Plan, error) {
	return PrepareFor(data, Target{Mode: ModePair})
}

// PrepareDecoded is Prepare of a template decoded already, as
// readTemplate decodes its JSON (numbers as json.Number): what the plugin
// has read. raw is not changed, and must not be while the plan is used.
func PrepareDecoded(raw map[string]any) (*Plan, error) {
	return PrepareDecodedFor(raw, Target{Mode: ModePair})
}

// prepare is PrepareFor of the template t, once read without error.
func (target Target) prepare(t *template, err error) (*Plan, error) {
	if err != nil {
		return nil, err
	}
	switch target.Mode {
	case "":
		target.Mode = ModePair
	case ModePair, ModeNative, ModeAuto:
	default:
		return nil, fmt.Errorf("inject: mode %q: give pair, native or auto", target.Mode)
	}
	pl := &Plan{t: t, orig: t, target: target}
	if Injected(t.annotations) {
		if pl.prev, err = uninject(t); err != nil {
			return nil, err
		}
		doc, err := applyTo(t.raw, pl.prev.ops)
		if err != nil {
			return nil, fmt.Errorf("undo the previous injection: %w", err)
		}
		if pl.orig, err = templateOf(doc, nil, false); err != nil {
			return nil, err
		}
	}
	if why := nothingToDo(&pl.orig.spec); why != "" {
		return pl.leave(why), nil
	}
	if err := admissible(&pl.orig.spec); err != nil {
		return nil, err
	}
	s, err := parseSettings(pl.orig.annotations)
	if err != nil {
		return nil, err
	}
	pl.p, err = makePlan(&pl.orig.spec, s, pl.orig.annotations[AnnotationDefaultContainer])
	if err != nil {
		return nil, err
	}
	if pl.p.exitCodes, err = exitCodeRules(target.ExitCodeRules, s.exitCodes); err != nil {
		return nil, err
	}
	if len(pl.p.sidecars) == 0 {
		if native := nativeOnes(&pl.orig.spec); native != "" {
			return pl.leave(fmt.Sprintf("every container but the job (%q) is ignored (%s%s)%s", pl.p.main, Prefix, keyIgnore, native)), nil
		}
		return pl.leave(fmt.Sprintf("no sidecar: every container but the job (%q) is ignored (%s%s), and it completes by itself, nothing to do", pl.p.main, Prefix, keyIgnore)), nil
	}
	pl.choice = pl.choose(nil, false)
	if pl.choice.err != nil {
		return nil, pl.choice.err
	}
	if pl.choice.form == FormPair && pl.p.probeErr != nil {
		return nil, pl.p.probeErr
	}
	if err := pl.checkWrapped(); err != nil {
		return nil, err
	}
	if pl.choice.form == FormNative {
		return pl, nil // nothing of the layout's is added
	}
	if err := checkClashes(&pl.orig.spec, pl.p); err != nil {
		return nil, err
	}
	return pl, nil
}

// nothingToDo says why a Pod needs no job-signal at all: one container and
// nothing else to wait for or to stop ends by itself, command or not: its
// init containers run before it, and Kubernetes stops native sidecars.
// The webhook's configuration sends only Pods of more than one container
// for the same reason.
func nothingToDo(spec *corev1.PodSpec) string {
	if len(spec.Containers) != 1 {
		return ""
	}
	if native := nativeOnes(spec); native != "" {
		return fmt.Sprintf("one container (%q)%s", spec.Containers[0].Name, native)
	}
	return fmt.Sprintf("one container (%q) and no sidecar: it completes by itself, nothing to do", spec.Containers[0].Name)
}

// nativeOnes says which sidecars of the Pod are native ones, which
// Kubernetes stops itself, and that this leaves job-signal nothing to do:
// the end of the note for a Pod that has them ("" when it has none).
func nativeOnes(spec *corev1.PodSpec) string {
	names := nativeSidecars(spec)
	for i, n := range names {
		names[i] = strconv.Quote(n)
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return ", and its sidecar " + names[0] + " is native (an init container with restartPolicy Always): Kubernetes stops it when the job ends, nothing to do"
	}
	return ", and its sidecars " + strings.Join(names, ", ") + " are native (init containers with restartPolicy Always): Kubernetes stops them when the job ends, nothing to do"
}

// leave decides that the template needs no job-signal, saying why. A
// template injected before (when it had a sidecar) has job-signal taken
// out instead: injecting it gives what injecting the original gives.
func (pl *Plan) leave(why string) *Plan {
	pl.p = nil
	if pl.prev.ops != nil {
		pl.takeOut = why
	} else {
		pl.nothing = why
	}
	return pl
}

// Nothing is non-empty, saying why, when the template needs no job-signal
// and is left unchanged.
func (pl *Plan) Nothing() string { return pl.nothing }

// Needs lists the containers Inject will wrap whose image must be looked
// up (they have no command). A Pod injected before needs none: its
// wrapped command lines are kept.
//
// A Pod given native sidecars needs none either, unless a sidecar asks for
// a stop signal (by annotation or as a known sidecar): the runtime stops a
// native sidecar with its image's STOPSIGNAL, so that image decides
// between the forms. Then Needs lists what either form needs: those
// images, and the pair's.
func (pl *Plan) Needs() []Need {
	if pl.p == nil || pl.choice.form == FormNative {
		return nil
	}
	var needs []Need
	for _, c := range pl.orig.spec.Containers {
		if pl.p.roles[c.Name] == roleIgnored {
			continue
		}
		if pl.prev.known[c.Name] == nil && NeedsImage(&c) || slices.Contains(pl.choice.pending, c.Name) {
			needs = append(needs, Need{Container: c.Name, Image: c.Image, needsCmd: NeedsImage(&c) && len(c.Args) == 0})
		}
	}
	return needs
}

// checkWrapped refuses a container that already runs under a tool that
// does what job-signal does: two such tools would fight over the same
// sidecars. The error says how to move to job-signal.
func (pl *Plan) checkWrapped() error {
	for _, c := range pl.orig.spec.Containers {
		if pl.p.roles[c.Name] == roleIgnored {
			continue
		}
		if tool := wrappedBy(slices.Concat(c.Command, c.Args), c.Env); tool != "" {
			return fmt.Errorf("container %q already runs under %s, which does what job-signal does: %s", c.Name, tool, migrationHint(tool, c.Name))
		}
	}
	return nil
}

// Inject completes the plan with the images' ENTRYPOINT, CMD and
// STOPSIGNAL (keyed by image reference as the containers write it) and
// the image of the install init container, and returns the changes.
// Injecting an injected template gives no changes unless its annotations
// changed.
func (pl *Plan) Inject(images map[string]ImageConfig, installer string) (Result, error) {
	if pl.nothing != "" {
		return Result{}, nil
	}
	if pl.takeOut != "" {
		return Result{Ops: pl.prev.ops, Warnings: []string{"job-signal taken out: " + pl.takeOut}}, nil
	}
	ch := pl.choice
	if len(ch.pending) > 0 {
		if ch = pl.choose(images, true); ch.err != nil {
			return Result{}, ch.err
		}
	}
	var ops []Op
	var warnings []string
	ch.signals = pl.signalsRead(images)
	if ch.form == FormNative {
		ops = nativeOps(pl.orig, ch, pl.prev.text)
		warnings = ch.warnings
	} else {
		if pl.p.probeErr != nil {
			return Result{}, pl.p.probeErr
		}
		if installer == "" {
			return Result{}, errors.New("inject: the installer image is empty: name the job-signal image of the install init container")
		}
		var note choice
		if pl.target.Mode != ModePair {
			note = ch
		}
		var err error
		if ops, warnings, err = pl.injectOps(images, installer, note); err != nil {
			return Result{}, err
		}
	}
	res := Result{Ops: ops, Warnings: warnings, Form: ch.form, Reason: ch.reason, Class: ch.class}
	if pl.prev.ops == nil {
		return res, nil
	}
	// Injected before: the same result is no change; a different one is
	// the undo followed by the new injection. From the pair to the pair,
	// the layout's volumes and init container stay as they are (admission
	// plugins may have changed them since: a token mount, a mirrored
	// image).
	res.Ops = slices.Concat(pl.prev.ops, ops)
	if pl.prev.form == FormPair && ch.form == FormPair {
		res.Ops = slices.DeleteFunc(res.Ops, func(o Op) bool { return o.layout })
	}
	doc, err := applyTo(pl.t.raw, res.Ops)
	if err != nil {
		return Result{}, err
	}
	if sameJSON(pl.t.raw, doc) {
		return Result{Warnings: warnings}, nil
	}
	return res, nil
}

// checkClashes refuses a Pod that already uses the names or paths the
// layout adds: Uninject finds what Inject added by those names.
func checkClashes(spec *corev1.PodSpec, p *plan) error {
	hint := "; if job-signal was added by hand, `kubectl job-signal uninject` turns it into annotations"
	for _, v := range spec.Volumes {
		if v.Name == StateVolume || v.Name == BinVolume {
			return fmt.Errorf("spec.volumes already has a volume named %q%s", v.Name, hint)
		}
	}
	if slices.ContainsFunc(spec.InitContainers, isInstaller) || slices.ContainsFunc(spec.Containers, isInstaller) {
		return fmt.Errorf("a container is already named %q%s", InitContainer, hint)
	}
	for _, c := range spec.Containers {
		if p.roles[c.Name] == roleIgnored {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.MountPath == StateDir || m.MountPath == BinDir || m.Name == StateVolume || m.Name == BinVolume {
				return fmt.Errorf("container %q already mounts %s at %s%s", c.Name, m.Name, m.MountPath, hint)
			}
		}
		if slices.Contains([]string{JobSignalPath, SidecarWatchPath}, first(c.Command)) {
			return fmt.Errorf("container %q already runs %s%s", c.Name, c.Command[0], hint)
		}
	}
	return nil
}

func first(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[0]
}
