package inject

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// legacyBinDir is where the first examples installed the binaries (one
// volume for state and binaries); unwrap recognises it too.
const legacyBinDir = StateDir + "/bin"

// unwrap takes job-signal out of a Pod that has it added by hand: it
// removes the layout's volumes, init container and mounts, restores each
// wrapped container's command line and turns the flags into annotations.
func unwrap(t *template) ([]Op, error) {
	var ops []Op
	set := map[string]string{}
	var main string
	var waitFor []string
	var hasWaitFor bool
	var sidecars, ignored []string
	rawContainers, _ := t.rawSpec["containers"].([]any)
	for i := range t.spec.Containers {
		c := &t.spec.Containers[i]
		raw, _ := rawContainers[i].(map[string]any)
		program, flags, cops, err := unwrapContainer(i, c, raw)
		if err != nil {
			return nil, fmt.Errorf("container %q: %w", c.Name, err)
		}
		ops = append(ops, cops...)
		switch program {
		case "":
			ignored = append(ignored, c.Name)
		case "job-signal":
			if main != "" {
				return nil, fmt.Errorf("containers %q and %q both run job-signal: a Pod has one main container", main, c.Name)
			}
			main = c.Name
			if waitFor, hasWaitFor, err = mainAnnotations(flags, set); err != nil {
				return nil, fmt.Errorf("container %q: %w", c.Name, err)
			}
		default:
			sidecars = append(sidecars, c.Name)
			if err := sidecarAnnotations(c.Name, flags, set); err != nil {
				return nil, fmt.Errorf("container %q: %w", c.Name, err)
			}
		}
	}
	if main == "" {
		if len(sidecars) > 0 {
			return nil, fmt.Errorf("container %q runs sidecar-watch but no container runs job-signal", sidecars[0])
		}
		return nil, nil
	}
	spec := Pointer("spec")
	ops = append(ops, removeItems(spec, "initContainers", t.rawSpec, "absent", "", InitContainer)...)
	ops = append(ops, removeItems(spec, "volumes", t.rawSpec, "absent", "", StateVolume, BinVolume)...)
	set[keyMain] = main
	if len(ignored) > 0 {
		set[keyIgnore] = strings.Join(ignored, ",")
	}
	if !hasWaitFor && len(sidecars) > 0 || hasWaitFor && !slices.Equal(waitFor, sidecars) {
		set["wait-for"] = strings.Join(waitFor, ",")
	}
	// The flags as annotations under Prefix, in order.
	keys := slices.Sorted(maps.Keys(set))
	all := make(Fields, len(keys))
	for i, k := range keys {
		all[i] = Field{Prefix + k, set[k]}
	}
	return append(ops, annotationOps(t.metadata, t.annState, all)...), nil
}

// unwrapContainer restores one container's command line and mounts: the
// program that wrapped it ("" for none) and its flags.
func unwrapContainer(i int, c *corev1.Container, raw map[string]any) (string, []flag, []Op, error) {
	program := wrapper(first(c.Command))
	if program == "" {
		return "", nil, nil, nil
	}
	flags, command, args, err := splitWrapped(c)
	if err != nil {
		return "", nil, nil, err
	}
	base := Pointer("spec", "containers", index(i))
	ops := []Op{{Op: "replace", Path: base + "/command", Value: command}}
	switch {
	case args != nil:
		ops = append(ops, Op{Op: "add", Path: base + "/args", Value: args})
	case presenceOf(raw, "args") != absent:
		ops = append(ops, Op{Op: "remove", Path: base + "/args"})
	}
	ops = append(ops, removeItems(base, "volumeMounts", raw, "absent", "", StateVolume, BinVolume)...)
	return program, flags, ops, nil
}

// mainAnnotations turns job-signal's flags into annotations (into set)
// and returns its --wait-for.
func mainAnnotations(flags []flag, set map[string]string) (waitFor []string, hasWaitFor bool, err error) {
	for _, f := range flags {
		switch f.name {
		case "wait-for":
			waitFor, _ = names(f.value)
			hasWaitFor = true
		case "ready-timeout":
			set[f.name] = f.value
		case "restart-policy", "dir":
			// restartPolicy decides the first; the layout the second.
		default:
			return nil, false, fmt.Errorf("job-signal --%s has no annotation; remove it or add it after injecting", f.name)
		}
	}
	return waitFor, hasWaitFor, nil
}

// sidecarAnnotations turns a sidecar-watch's flags into annotations.
func sidecarAnnotations(name string, flags []flag, set map[string]string) error {
	for _, f := range flags {
		o, known := option(f.name)
		switch {
		case f.name == "name" && f.value != name:
			return fmt.Errorf("sidecar-watch --name %s: inject names each sidecar after its container; rename one of them", f.value)
		case f.name == "name", f.name == "dir":
		case known && !o.Main:
			set[f.name+"."+name] = f.value
		default:
			return fmt.Errorf("sidecar-watch --%s has no annotation; remove it or add it after injecting", f.name)
		}
	}
	return nil
}

// wrapper returns "job-signal" or "sidecar-watch" when program is one of
// them as installed by the layout (or the legacy one), else "".
func wrapper(program string) string {
	dir, base := path.Split(program)
	dir = strings.TrimSuffix(dir, "/")
	if (dir == BinDir || dir == legacyBinDir) && (base == "job-signal" || base == "sidecar-watch") {
		return base
	}
	return ""
}

type flag struct{ name, value string }

// valueless are the boolean flags of job-signal and sidecar-watch.
var valueless = []string{"signal-group", "subreaper", "poll"}

// splitWrapped parses a wrapped command line: the wrapper's flags up to
// "--" (or the first word not starting with '-'), then the original command
// line. Words of the original that were in command stay in command, the
// rest in args; when all of it is in args it moves back to command.
func splitWrapped(c *corev1.Container) (flags []flag, command, args []string, err error) {
	words := slices.Concat(c.Command[1:], c.Args)
	i := 0
	for i < len(words) {
		w := words[i]
		if w == "--" {
			i++
			break
		}
		if !strings.HasPrefix(w, "--") {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		if !hasValue && !slices.Contains(valueless, name) {
			if i+1 >= len(words) {
				return nil, nil, nil, fmt.Errorf("flag --%s has no value", name)
			}
			i++
			value = words[i]
		}
		flags = append(flags, flag{name, value})
		i++
	}
	line := words[i:]
	if len(line) == 0 {
		return nil, nil, nil, fmt.Errorf("%s has no command after its flags", c.Command[0])
	}
	if inCommand := len(c.Command) - 1 - i; inCommand > 0 {
		return flags, line[:inCommand], slices.Clone(c.Args), nil
	}
	return flags, slices.Clone(line), nil, nil
}
