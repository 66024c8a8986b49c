// The native form: moving sidecars to initContainers and back, with the record uninject needs: long because
// the move, its record and its undo must be read together.

package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The native form (docs/native.md): each sidecar moved from containers to
// the end of initContainers, in start order, with restartPolicy Always, a
// startupProbe when its readiness maps onto one, a preStop hook when its
// quit URL does; nothing of job-signal's in the Pod.

// podNeedsOf gathers what the choice of form reads from the plan, the
// images looked up (by reference) and the signals a previous native
// injection recorded.
func (pl *Plan) podNeedsOf(images map[string]ImageConfig) podNeeds {
	p, spec := pl.p, &pl.orig.spec
	pod := podNeeds{after: p.after, grace: defaultTerminationGrace}
	if spec.TerminationGracePeriodSeconds != nil {
		pod.grace = time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
	}
	if v, ok := p.s.main1["ready-timeout"]; ok {
		d, _ := time.ParseDuration(v) // checked by parseSettings
		pod.readyTimeout = d > 0      // 0: wait for ever, as a native sidecar does
	}
	pod.someWaitFor = p.s.hasWaitFor && len(p.s.waitFor) < len(p.sidecars)
	pod.exitCodes = p.exitCodes
	rawContainers, _ := pl.orig.rawSpec["containers"].([]any)
	for i := range spec.Containers {
		c := &spec.Containers[i]
		row := p.known[c.Name]
		serves := servedPorts(c, row)
		if p.roles[c.Name] != roleSidecar {
			pod.regulars = append(pod.regulars, regular{name: c.Name, main: p.roles[c.Name] == roleMain, proxy: row != nil && row.NetworkProxy, serves: serves})
			continue
		}
		raw, _ := rawContainers[i].(map[string]any)
		own := p.s.sidecar[c.Name]
		setting := func(key string) string {
			if v, ok := own[key]; ok {
				return v
			}
			return p.s.podWide[key] // only PodWide options are there
		}
		s := sidecarNeeds{name: c.Name, startupProbe: c.StartupProbe, readinessProbe: c.ReadinessProbe,
			quitURL: own["quit-url"], restart: setting("restart"), stopAfter: p.stop[c.Name],
			preStop:    c.Lifecycle != nil && c.Lifecycle.PreStop != nil,
			ownRestart: presenceOf(raw, "restartPolicy") == present || presenceOf(raw, "restartPolicyRules") == present,
			ports:      c.Ports, serves: serves, proxy: row != nil && row.NetworkProxy, prompt: row != nil && row.StopsPromptly}
		for _, k := range []string{"ready-tcp", "ready-http", "ready-file", "ready-exec"} {
			if v, ok := own[k]; ok {
				s.readyKey, s.readyValue = k, v
			}
		}
		if v := setting("grace"); v != "" {
			s.grace, _ = time.ParseDuration(v) // checked by parseSettings
		}
		var img *ImageConfig
		if cfg, ok := images[c.Image]; ok {
			img = &cfg
		}
		if raw, ok := pl.imageStop(c.Name, c.Image, images); ok {
			s.imageSignal = "TERM"
			if raw != "" {
				s.imageSignal = signalName(raw)
			}
		}
		if v := setting("stop-signal"); v != "" {
			s.stopSignal, s.stopFrom = signalName(v), "annotation stop-signal"
		} else if row != nil && row.StopSignal != "" {
			s.stopSignal, s.stopFrom = row.StopSignal, "the known sidecar "+row.Name
		}
		if row != nil && s.readyKey == "" && c.StartupProbe == nil && c.ReadinessProbe == nil {
			line := pl.prev.known[c.Name]
			if line == nil {
				if line, _ = Effective(c, img); line == nil {
					line = slices.Concat(c.Command, c.Args)
				}
			}
			s.tableReady = fromTable(row.Ready, line, c.Env)
		}
		pod.sidecars = append(pod.sidecars, s)
	}
	return pod
}

// choose decides the form with what is known of the images: before they
// are looked up (looked false), or after, with what the lookup gave.
// Where the mode and the cluster decide alone, the Pod is not read.
func (pl *Plan) choose(images map[string]ImageConfig, looked bool) choice {
	t := pl.target
	if t.Mode == ModePair || !t.Cluster.NativeSidecars && (t.Cluster.Known || t.Mode == ModeAuto) {
		return chooseForm(t, podNeeds{})
	}
	pod := pl.podNeedsOf(images)
	pod.looked = looked
	return chooseForm(t, pod)
}

// nativeOps are the changes that give t (a template without job-signal)
// native sidecars as ch says, the record last.
func nativeOps(t *template, ch choice, text map[string]string) []Op {
	rec := record{Version: nativeVersion, Form: FormNative, Reason: ch.reason, Was: map[string]string{}, Text: text, Signals: ch.signals}
	var ops []Op
	spec := Pointer("spec")
	if state := presenceOf(t.rawSpec, "initContainers"); state != present {
		ops = append(ops, Op{Op: "add", Path: spec + "/initContainers", Value: []any{}, Keep: "initContainers"})
		rec.Was["initContainers"] = state.String()
	}
	names := make([]string, len(t.spec.Containers))
	for i, c := range t.spec.Containers {
		names[i] = c.Name
	}
	for _, name := range ch.order {
		i := slices.Index(names, name)
		ops = append(ops, Op{Op: "move", From: spec + "/containers/" + index(i), Path: spec + "/initContainers/-"})
		names = slices.Delete(names, i, i+1)
	}
	rawContainers, _ := t.rawSpec["containers"].([]any)
	first := len(t.spec.InitContainers)
	for k, name := range ch.order {
		i := slices.IndexFunc(t.spec.Containers, func(c corev1.Container) bool { return c.Name == name })
		raw, _ := rawContainers[i].(map[string]any)
		base := spec + "/initContainers/" + index(first+k)
		m := movedRecord{Name: name, Index: i, Was: map[string]string{}}
		add := func(member string, state presence, value any) {
			op := Op{Op: "add", Path: base + "/" + member, Value: value}
			if state == null {
				m.Was[member] = "null"
				op.Keep = name + "." + member
			}
			ops = append(ops, op)
			m.Added = append(m.Added, member)
		}
		add("restartPolicy", presenceOf(raw, "restartPolicy"), string(corev1.ContainerRestartPolicyAlways))
		a := ch.adds[name]
		if a.startupProbe != nil {
			add("startupProbe", presenceOf(raw, "startupProbe"), fieldsOf(*a.startupProbe))
		}
		if a.preStop != nil {
			preStop := fieldsOf(*a.preStop)
			lifecycle, state, _ := member(raw, "lifecycle")
			if state == present {
				add("lifecycle/preStop", presenceOf(lifecycle, "preStop"), preStop)
			} else {
				add("lifecycle", state, Fields{{"preStop", preStop}})
			}
		}
		rec.Moved = append(rec.Moved, m)
	}
	return append(ops, setAnnotation(t, &rec))
}

// uninjectNative undoes nativeOps from its record: the additions removed,
// each container moved back to its index, initContainers as it was.
func uninjectNative(t *template, rec record) (undone, error) {
	u := undone{known: map[string][]string{}, signals: rec.Signals, text: rec.Text, form: FormNative}
	edited := fmt.Errorf("annotation %s names what the Pod no longer has as injected: the Pod was edited after injection", AnnotationInjected)
	init := make([]string, len(t.spec.InitContainers))
	for i, c := range t.spec.InitContainers {
		init[i] = c.Name
	}
	containers := len(t.spec.Containers)
	rawInit, _ := t.rawSpec["initContainers"].([]any)
	spec := Pointer("spec")
	for _, m := range rec.Moved {
		j := slices.Index(init, m.Name)
		if j < 0 {
			return u, edited
		}
		raw, _ := rawInit[j].(map[string]any)
		base := spec + "/initContainers/" + index(j)
		for _, member := range slices.Backward(m.Added) {
			if !hasPath(raw, member) {
				return u, edited
			}
			if m.Was[member] == "null" {
				u.ops = append(u.ops, Op{Op: "replace", Path: base + "/" + member, Value: nil, Text: rec.Text[m.Name+"."+member]})
			} else {
				u.ops = append(u.ops, Op{Op: "remove", Path: base + "/" + member})
			}
		}
	}
	back := slices.Clone(rec.Moved)
	slices.SortStableFunc(back, func(a, b movedRecord) int { return a.Index - b.Index })
	for _, m := range back {
		j := slices.Index(init, m.Name)
		if m.Index < 0 || m.Index > containers {
			return u, edited
		}
		u.ops = append(u.ops, Op{Op: "move", From: spec + "/initContainers/" + index(j), Path: spec + "/containers/" + index(m.Index)})
		init = slices.Delete(init, j, j+1)
		containers++
	}
	if was := rec.Was["initContainers"]; was != "" && len(init) == 0 {
		u.ops = append(u.ops, undoAdd(spec+"/initContainers", was, rec.Text["initContainers"]))
	}
	u.ops = append(u.ops, removeAnnotation(t, rec)...)
	return u, nil
}

// hasPath says whether the member path (members joined by "/") is set in
// obj.
func hasPath(obj map[string]any, path string) bool {
	var v any = obj
	for _, k := range Tokens("/" + path) {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k]; !ok {
			return false
		}
	}
	return true
}

// fieldsOf is v written as JSON and read back as Fields, keeping the
// order json.Marshal writes its members in: a Kubernetes type's own field
// order.
func fieldsOf(v any) Fields {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // Kubernetes types always marshal
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	f, _ := orderedValue(dec).(Fields)
	return f
}

// orderedValue reads the next JSON value from dec, objects as Fields.
func orderedValue(dec *json.Decoder) any {
	tok, _ := dec.Token()
	switch tok {
	case json.Delim('{'):
		f := Fields{}
		for dec.More() {
			k, _ := dec.Token()
			f = append(f, Field{k.(string), orderedValue(dec)})
		}
		dec.Token()
		return f
	case json.Delim('['):
		l := []any{}
		for dec.More() {
			l = append(l, orderedValue(dec))
		}
		dec.Token()
		return l
	}
	return tok
}

// imageStop is the STOPSIGNAL of the image of container name, as the
// image's config has it ("" for none): from images, else as a previous
// injection recorded it; known false when neither says.
func (pl *Plan) imageStop(name, image string, images map[string]ImageConfig) (raw string, known bool) {
	if cfg, ok := images[image]; ok {
		return cfg.StopSignal, true
	}
	raw, known = pl.prev.signals[name]
	return raw, known
}

// signalsRead are the STOPSIGNALs of the sidecars' images that the choice
// of form read, by container, for the record.
func (pl *Plan) signalsRead(images map[string]ImageConfig) map[string]string {
	out := map[string]string{}
	for _, name := range pl.choice.signalled {
		if c := container(&pl.orig.spec, name); c != nil {
			if raw, ok := pl.imageStop(name, c.Image, images); ok {
				out[name] = raw
			}
		}
	}
	return out
}

// NativeWouldServe says whether native sidecars would serve this Pod on a
// cluster that has them, with nothing looked up: the native form keeps
// every container's command, so needs no image's ENTRYPOINT. For the
// refusal of a Pod whose images cannot be looked up.
func (pl *Plan) NativeWouldServe() bool {
	if pl.p == nil {
		return false
	}
	pod := pl.podNeedsOf(nil)
	pod.looked = true // an image's STOPSIGNAL is not known, and will not be
	ch := chooseForm(Target{Mode: ModeNative, Cluster: Cluster{Known: true, NativeSidecars: true}}, pod)
	return ch.err == nil && ch.form == FormNative
}
