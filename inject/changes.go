package inject

import (
	"fmt"
	"path"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// injectOps decides the changes that add job-signal to the template
// without it (pl.orig): per wrapped container its command line and mounts,
// then the layout's init container and volumes, then the record, last.
// note, when a mode other than pair chose the pair, says so in the record.
func (pl *Plan) injectOps(images map[string]ImageConfig, installer string, note choice) ([]Op, []string, error) {
	t, p := pl.orig, pl.p
	rec := record{Version: recordVersion, Form: note.form, Reason: note.reason, Was: map[string]string{}, Text: pl.prev.text, Signals: note.signals}
	if rec.Signals == nil {
		rec.Signals = map[string]string{}
	}
	var ops []Op
	var warnings []string
	grace, quit := map[string]time.Duration{}, map[string]bool{}
	rawContainers, _ := t.rawSpec["containers"].([]any)
	for i := range t.spec.Containers {
		c := &t.spec.Containers[i]
		r := p.roles[c.Name]
		if r == roleIgnored {
			continue
		}
		raw, _ := rawContainers[i].(map[string]any)
		var img *ImageConfig
		if cfg, ok := images[c.Image]; ok {
			img = &cfg
		}
		line := pl.prev.known[c.Name]
		if line == nil {
			var err error
			if line, err = Effective(c, img); err != nil {
				return nil, nil, fmt.Errorf("container %q (image %s): %w", c.Name, c.Image, err)
			}
		}
		command := append(append([]string{JobSignalPath}, p.mainFlags()...), "--")
		if r == roleSidecar {
			stop, _ := pl.imageStop(c.Name, c.Image, images)
			if imageDecides(c.Name, stop, p.known[c.Name]) {
				rec.Signals[c.Name] = stop // injecting again, without the image, would lose it
			}
			values, w := p.sidecarValues(c.Name, line, stop)
			warnings = append(warnings, w...)
			command = append(append([]string{SidecarWatchPath}, sidecarFlags(c.Name, values)...), "--")
			grace[c.Name] = DefaultGrace
			if v, ok := values["grace"]; ok {
				grace[c.Name], _ = time.ParseDuration(v) // checked by parseSettings
			}
			_, quit[c.Name] = values["quit-url"]
		}
		base := Pointer("spec", "containers", index(i))
		cops, cr := commandOps(base, c, raw, command, line)
		ops = append(ops, cops...)
		mops, was := addItems(base, "volumeMounts", raw, c.Name+".volumeMounts", mountValue(StateVolume, StateDir, false), mountValue(BinVolume, BinDir, true))
		ops = append(ops, mops...)
		if was != "" {
			cr.Was["volumeMounts"] = was
		}
		rec.Containers = append(rec.Containers, cr)
	}
	spec := Pointer("spec")
	if presenceOf(t.rawSpec, "initContainers") == present {
		ops = append(ops, Op{Op: "add", Path: spec + "/initContainers/0", Value: installValue(installer), layout: true})
	} else {
		ops = append(ops, Op{Op: "add", Path: spec + "/initContainers", Value: []any{installValue(installer)}, Keep: "initContainers", layout: true})
		rec.Was["initContainers"] = presenceOf(t.rawSpec, "initContainers").String()
	}
	vops, was := addItems(spec, "volumes", t.rawSpec, "volumes", volumeValue(StateVolume, "1Mi"), volumeValue(BinVolume, "32Mi"))
	for i := range vops {
		vops[i].layout = true
	}
	ops = append(ops, vops...)
	if was != "" {
		rec.Was["volumes"] = was
	}
	warnings = append(warnings, budgetWarnings(t.spec.TerminationGracePeriodSeconds, p.sidecars, grace, quit, p.stop)...)
	ops = append(ops, setAnnotation(t, &rec))
	return ops, warnings, nil
}

// addItems appends items to the list obj[key] under base, or sets the list
// when it is absent or null (was says which, for the record).
func addItems(base, key string, obj map[string]any, place string, items ...any) (ops []Op, was string) {
	path := base + "/" + key
	if presenceOf(obj, key) == present {
		for _, it := range items {
			ops = append(ops, Op{Op: "add", Path: path + "/-", Value: it})
		}
		return ops, ""
	}
	return []Op{{Op: "add", Path: path, Value: slices.Clone(items), Keep: place}}, presenceOf(obj, key).String()
}

// setAnnotation writes the record, creating metadata and annotations when
// they are absent or null (which the record itself then says).
func setAnnotation(t *template, rec *record) Op {
	switch {
	case t.metadata != present:
		rec.Was["metadata"] = t.metadata.String()
	case t.annState != present:
		rec.Was["annotations"] = t.annState.String()
	}
	op := annotationOps(t.metadata, t.annState, Fields{{AnnotationInjected, rec.encode()}})[0]
	if op.Path == "/metadata" || op.Path == "/metadata/annotations" {
		op.Keep = path.Base(op.Path) // the place created: "metadata" or "annotations"
	}
	return op
}

// commandOps moves the container's command line into args and puts the
// wrapper in command, changing as little as it can (see the cases below),
// and records how, so that uninjectCommand undoes exactly that.
func commandOps(base string, c *corev1.Container, raw map[string]any, wrapper, line []string) ([]Op, containerRecord) {
	cmdState, argsState := presenceOf(raw, "command"), presenceOf(raw, "args")
	cr := containerRecord{Name: c.Name, Command: c.Command, Args: c.Args, Was: map[string]string{}, Sum: commandSum(wrapper, line)}
	if cmdState != present {
		cr.Was["command"] = cmdState.String()
	}
	if argsState != present {
		cr.Was["args"] = argsState.String()
	}
	command, args := base+"/command", base+"/args"
	setCommand := Op{Op: "add", Path: command, Value: wrapper, Keep: c.Name + ".command"}
	switch {
	case len(c.Command) > 0 && argsState == absent:
		// The command's own text becomes args; the wrapper is a new line.
		cr.How = "move"
		// Keep: the key's text, when a front end cannot spell it back.
		return []Op{{Op: "move", From: command, Path: args, Keep: c.Name + ".command-key"}, {Op: "add", Path: command, Value: wrapper}}, cr
	case len(c.Command) > 0 && c.Args != nil:
		// args (a list) keeps its text, the command's words go in front.
		cr.How, cr.N = "merge", len(c.Command)
		return append([]Op{setCommand}, prepend(args, c.Command)...), cr
	case len(c.Command) == 0 && len(c.Args) > 0:
		// The image's ENTRYPOINT goes in front of args.
		cr.How, cr.N = "prepend", len(line)-len(c.Args)
		return append([]Op{setCommand}, prepend(args, line[:cr.N])...), cr
	}
	cr.How = "set"
	return []Op{setCommand, {Op: "add", Path: args, Value: line, Keep: c.Name + ".args"}}, cr
}

// prepend puts words in front of the list at path, in order.
func prepend(path string, words []string) []Op {
	ops := make([]Op, len(words))
	for i, w := range words {
		ops[i] = Op{Op: "add", Path: path + "/" + index(i), Value: w}
	}
	return ops
}

// mountValue, volumeValue and installValue are the layout's additions as
// a person writes them (docs/layout.md).
func mountValue(name, path string, readOnly bool) Fields {
	f := Fields{{"name", name}, {"mountPath", path}}
	if readOnly {
		f = append(f, Field{"readOnly", true})
	}
	return f
}

func volumeValue(name, limit string) Fields {
	return Fields{{"name", name}, {"emptyDir", Fields{{"medium", "Memory"}, {"sizeLimit", limit}}}}
}

func installValue(image string) Fields {
	return Fields{
		{"name", InitContainer},
		{"image", image},
		{"command", []string{installerPath, "install", BinDir}},
		{"resources", Fields{
			{"requests", Fields{{"cpu", "10m"}, {"memory", "16Mi"}}},
			{"limits", Fields{{"cpu", "100m"}, {"memory", "32Mi"}}},
		}},
		{"securityContext", Fields{
			{"runAsNonRoot", true},
			{"runAsUser", nonRootID},
			{"runAsGroup", nonRootID},
			{"readOnlyRootFilesystem", true},
			{"allowPrivilegeEscalation", false},
			{"capabilities", Fields{{"drop", []string{"ALL"}}}},
			{"seccompProfile", Fields{{"type", "RuntimeDefault"}}},
		}},
		{"volumeMounts", []any{mountValue(BinVolume, BinDir, false)}},
	}
}

// imageDecides says whether the image's STOPSIGNAL stop gives sidecar
// name another stop signal than it has without its image.
func imageDecides(name, stop string, k *KnownSidecar) bool {
	with, _ := stopSignalOf(name, stop, k)
	without, _ := stopSignalOf(name, "", k)
	return with != without
}

// fieldsBefore and fieldsAfter are Kubernetes' own field order, as
// kubectl get and the API reference write objects, for the members
// Inject adds: a new member goes before the first of fieldsBefore that
// is there, else after the first of fieldsAfter that is there.
var (
	fieldsBefore = map[string][]string{"command": {"args", "workingDir"}, "args": {"workingDir"}, "initContainers": {"containers"}, "metadata": {"spec"},
		// The native form's additions to a container, and to its lifecycle.
		"restartPolicy": {"restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
			"terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"},
		"startupProbe": {"lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"},
		"lifecycle":    {"terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"},
		"preStop":      {"stopSignal"},
	}
	fieldsAfter = map[string][]string{"command": {"image", "name"}, "args": {"command", "image", "name"},
		"restartPolicy": containerBefore("restartPolicy"), "startupProbe": containerBefore("startupProbe"), "lifecycle": containerBefore("lifecycle"),
		"preStop": {"postStart"},
	}
)

// containerFields are a container's members in Kubernetes' order (the
// fields of corev1.Container).
var containerFields = []string{"name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
	"restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
	"terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"}

// containerBefore lists the container's members before key, nearest first.
func containerBefore(key string) []string {
	before := slices.Clone(containerFields[:slices.Index(containerFields, key)])
	slices.Reverse(before)
	return before
}

// FieldIndex is where a person puts the new member key among the members
// keys of an object, in their order: the index to insert it at. A front
// end that writes source text puts Inject's additions there; the others
// go last.
func FieldIndex(keys []string, key string) int {
	for _, b := range fieldsBefore[key] {
		if i := slices.Index(keys, b); i >= 0 {
			return i
		}
	}
	for _, a := range fieldsAfter[key] {
		if i := slices.Index(keys, a); i >= 0 {
			return i + 1
		}
	}
	return len(keys)
}
