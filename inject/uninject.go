package inject

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Uninject takes job-signal out of a Pod template (JSON, as for Prepare):
// exactly what Inject did, from its record; or, without a record,
// job-signal added by hand, whose flags become annotations so that
// injecting again gives the same Pod. A template without job-signal gives
// no changes.
func Uninject(data []byte) (Result, error) {
	return uninjectTemplate(readTemplate(data))
}

// UninjectDecoded is Uninject of a template decoded already, as
// readTemplate decodes its JSON (numbers as json.Number). raw is not
// changed.
func UninjectDecoded(raw map[string]any) (Result, error) {
	return uninjectTemplate(readDecoded(raw))
}

// uninjectTemplate is Uninject of the template t, once read without error.
func uninjectTemplate(t *template, err error) (Result, error) {
	if err != nil {
		return Result{}, err
	}
	if Injected(t.annotations) {
		u, err := uninject(t)
		return Result{Ops: u.ops}, err
	}
	ops, err := unwrap(t)
	return Result{Ops: ops}, err
}

// undone is the undoing of a recorded injection: its ops, and the command
// line each wrapped container had, by name.
type undone struct {
	ops     []Op
	known   map[string][]string
	text    map[string]string // the record's kept source texts
	signals map[string]string // native: the STOPSIGNALs the choice read
	form    Form              // the form taken out
}

// uninject undoes Inject from its record.
func uninject(t *template) (undone, error) {
	u := undone{known: map[string][]string{}, form: FormPair}
	rec, err := decodeRecord(t.annotations[AnnotationInjected])
	if err != nil {
		return u, err
	}
	if rec.Form == FormNative {
		return uninjectNative(t, rec)
	}
	u.text, u.signals = rec.Text, rec.Signals
	rawContainers, _ := t.rawSpec["containers"].([]any)
	for _, cr := range rec.Containers {
		i := slices.IndexFunc(t.spec.Containers, func(c corev1.Container) bool { return c.Name == cr.Name })
		if i < 0 {
			return u, fmt.Errorf("annotation %s names container %q, which the Pod no longer has", AnnotationInjected, cr.Name)
		}
		c := &t.spec.Containers[i]
		if commandSum(c.Command, c.Args) != cr.Sum {
			return u, fmt.Errorf("container %q: command or args changed after injection; undoing the injection would lose that change: edit the source and inject again", c.Name)
		}
		u.known[c.Name] = c.Args
		base := Pointer("spec", "containers", index(i))
		ops, err := uninjectCommand(base, cr, rec.Text)
		if err != nil {
			return u, fmt.Errorf("container %q: %w", c.Name, err)
		}
		u.ops = append(u.ops, ops...)
		raw, _ := rawContainers[i].(map[string]any)
		u.ops = append(u.ops, removeItems(base, "volumeMounts", raw, cr.Was["volumeMounts"], rec.Text[cr.Name+".volumeMounts"], StateVolume, BinVolume)...)
	}
	spec := Pointer("spec")
	init := removeItems(spec, "initContainers", t.rawSpec, rec.Was["initContainers"], rec.Text["initContainers"], InitContainer)
	vols := removeItems(spec, "volumes", t.rawSpec, rec.Was["volumes"], rec.Text["volumes"], StateVolume, BinVolume)
	if len(init) == 0 || len(vols) == 0 {
		return u, fmt.Errorf("annotation %s is set but spec.initContainers has no %q or spec.volumes lacks %q and %q: the Pod was edited after injection", AnnotationInjected, InitContainer, StateVolume, BinVolume)
	}
	for _, o := range slices.Concat(init, vols) {
		o.layout = true
		u.ops = append(u.ops, o)
	}
	u.ops = append(u.ops, removeAnnotation(t, rec)...)
	return u, nil
}

// uninjectCommand undoes commandOps, case by case.
func uninjectCommand(base string, cr containerRecord, text map[string]string) ([]Op, error) {
	command, args := base+"/command", base+"/args"
	restore := func(path, field string, value []string) Op {
		if cr.Was[field] == "absent" {
			return Op{Op: "remove", Path: path}
		}
		var v any = value
		if cr.Was[field] == "null" {
			v = nil
		}
		return Op{Op: "replace", Path: path, Value: v, Text: text[cr.Name+"."+field]}
	}
	unprepend := func() []Op {
		ops := make([]Op, cr.N)
		for i := range ops {
			ops[i] = Op{Op: "remove", Path: args + "/0"}
		}
		return ops
	}
	switch cr.How {
	case "move":
		return []Op{{Op: "remove", Path: command}, {Op: "move", From: args, Path: command, Text: text[cr.Name+".command-key"]}}, nil
	case "merge", "prepend":
		return append(unprepend(), restore(command, "command", cr.Command)), nil
	case "set":
		return []Op{restore(command, "command", cr.Command), restore(args, "args", cr.Args)}, nil
	}
	return nil, fmt.Errorf("annotation %s: unknown change %q", AnnotationInjected, cr.How)
}

// removeItems removes the items named names from the list obj[key] under
// base; when the list was absent or null before (was) and nothing else is
// left in it, it goes back to that. No ops when none of the items is there.
func removeItems(base, key string, obj map[string]any, was, text string, names ...string) []Op {
	list, _ := obj[key].([]any)
	var found []int
	for i, it := range list {
		if m, ok := it.(map[string]any); ok && slices.Contains(names, fmt.Sprint(m["name"])) {
			found = append(found, i)
		}
	}
	if len(found) == 0 {
		return nil
	}
	path := base + "/" + key
	if len(found) == len(list) && was != "" {
		return []Op{undoAdd(path, was, text)}
	}
	var ops []Op
	for i := len(found) - 1; i >= 0; i-- {
		ops = append(ops, Op{Op: "remove", Path: path + "/" + index(found[i])})
	}
	return ops
}

// undoAdd takes back a value added where there was none: the place is
// removed again (was "absent") or set back to null, with its source text.
func undoAdd(path, was, text string) Op {
	if was == "absent" {
		return Op{Op: "remove", Path: path}
	}
	return Op{Op: "replace", Path: path, Value: nil, Text: text}
}

// removeAnnotation removes the record, and metadata or annotations when
// Inject created them and nothing else is in them now.
func removeAnnotation(t *template, rec record) []Op {
	others := len(t.annotations) > 1
	switch {
	case rec.Was["metadata"] != "" && !others && len(t.raw["metadata"].(map[string]any)) == 1:
		return []Op{undoAdd("/metadata", rec.Was["metadata"], rec.Text["metadata"])}
	case (rec.Was["annotations"] != "" || rec.Was["metadata"] != "") && !others:
		if rec.Was["annotations"] == "null" {
			return []Op{{Op: "replace", Path: "/metadata/annotations", Value: nil, Text: rec.Text["annotations"]}}
		}
		return []Op{{Op: "remove", Path: "/metadata/annotations"}}
	}
	return []Op{{Op: "remove", Path: Pointer("metadata", "annotations", AnnotationInjected)}}
}

// KeepText returns ops with the record (the last op) keeping texts, by
// place: the source text of values the ops replace that a front end could
// not write back the same way. Each text starts with its format ("yaml:"
// or "json:").
func KeepText(ops []Op, texts map[string]string) []Op {
	if len(texts) == 0 || len(ops) == 0 {
		return ops
	}
	out := slices.Clone(ops)
	last := &out[len(out)-1]
	update := func(s string) string {
		rec, err := decodeRecord(s)
		if err != nil {
			return s
		}
		if rec.Text == nil {
			rec.Text = map[string]string{}
		}
		maps.Copy(rec.Text, texts)
		return rec.encode()
	}
	switch v := last.Value.(type) {
	case string:
		last.Value = update(v)
	case Fields:
		last.Value = mapFields(v, update)
	}
	return out
}

// mapFields applies f to the record inside a metadata or annotations
// value.
func mapFields(f Fields, update func(string) string) Fields {
	out := slices.Clone(f)
	for i, m := range out {
		switch v := m.Value.(type) {
		case string:
			if m.Key == AnnotationInjected {
				out[i].Value = update(v)
			}
		case Fields:
			out[i].Value = mapFields(v, update)
		}
	}
	return out
}
