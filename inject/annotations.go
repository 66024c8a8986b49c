package inject

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	kjson "sigs.k8s.io/json"

	"github.com/job-signal/job-signal/signalfs/sidecarname"
	"github.com/job-signal/job-signal/signalfs/sidecarspec"
)

// Prefix starts every annotation and label job-signal reads or writes.
const Prefix = "job-signal.dev/"

const (
	// AnnotationInjected records what Inject changed, so Uninject can
	// restore it. Written by Inject; do not edit.
	AnnotationInjected = Prefix + "injected"
	// AnnotationSkipped says why the webhook admitted a Pod unchanged.
	AnnotationSkipped = Prefix + "skipped"
	// LabelInject = "enabled" on a Pod (or its namespace) asks the webhook
	// to inject it; "disabled" on a Pod opts it out.
	LabelInject = Prefix + "inject"

	// annotations naming containers.
	keyMain   = "main"
	keyIgnore = "ignore"
)

// Option is one annotation that becomes a flag of job-signal (Main) or of
// sidecar-watch (a sidecar's, written job-signal.dev/KEY.SIDECAR).
type Option struct {
	Key  string // after Prefix
	Flag string
	// Main options apply to the main container; the others to one sidecar
	// (KEY.NAME) or, when PodWide, to every sidecar (KEY alone).
	Main, PodWide bool
	check         func(string) error
}

// Options are the annotations that map to flags, in the order the flags
// are written. README's annotation table lists the same.
var Options = []Option{
	{Key: "wait-for", Flag: "--wait-for", Main: true, check: parses(names)},
	{Key: "ready-timeout", Flag: "--ready-timeout", Main: true, check: parses(sidecarspec.Duration)},
	{Key: "ready-tcp", Flag: "--ready-tcp", check: parses(sidecarspec.TCPAddr)},
	{Key: "ready-http", Flag: "--ready-http", check: parses(sidecarspec.HTTPURL)},
	{Key: "ready-file", Flag: "--ready-file", check: parses(sidecarspec.File)},
	{Key: "ready-exec", Flag: "--ready-exec", check: parses(sidecarspec.Exec)},
	{Key: "after", Flag: "--after", check: parses(names)},
	{Key: "stop-after", Flag: "--stop-after", check: parses(names)},
	{Key: "quit-url", Flag: "--quit-url", check: parses(sidecarspec.HTTPURL)},
	{Key: "stop-signal", Flag: "--stop-signal", PodWide: true, check: parses(sidecarspec.StopSignal)},
	{Key: "grace", Flag: "--grace", PodWide: true, check: parses(sidecarspec.Duration)},
	{Key: "restart", Flag: "--restart", PodWide: true, check: sidecarspec.Restart},
}

func option(key string) (Option, bool) {
	for _, o := range Options {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// settings are the job-signal.dev/ annotations, parsed and checked on
// their own; plan checks them against the Pod's containers.
type settings struct {
	main    []string // as written; one name at most is valid
	hasMain bool
	ignore  []string
	// waitFor is nil when not annotated (every sidecar), empty for "".
	waitFor    []string
	hasWaitFor bool
	main1      map[string]string            // main options other than wait-for, by key
	podWide    map[string]string            // by key, PodWide options only
	sidecar    map[string]map[string]string // by container, then key
	exitCodes  judged                       // AnnotationExitCodeRules
}

// parseSettings reads the annotations under Prefix. Errors name the
// annotation and say what is accepted.
func parseSettings(annotations map[string]string) (settings, error) {
	s := settings{main1: map[string]string{}, podWide: map[string]string{}, sidecar: map[string]map[string]string{}}
	// In order: the first error is the same on every run.
	for _, full := range slices.Sorted(maps.Keys(annotations)) {
		key, ok := strings.CutPrefix(full, Prefix)
		if !ok || full == AnnotationInjected || full == AnnotationSkipped || full == LabelInject {
			continue
		}
		value := strings.TrimSpace(annotations[full])
		if full == AnnotationExitCodeRules {
			j, err := parseExitCodeRules(value)
			if err != nil {
				return settings{}, fmt.Errorf("annotation %s: %w", full, err)
			}
			s.exitCodes = j
			continue
		}
		if err := s.add(key, value); err != nil {
			return settings{}, fmt.Errorf("annotation %s: %w", full, err)
		}
	}
	return s, nil
}

func (s *settings) add(key, value string) error {
	switch key {
	case keyMain:
		names, err := names(value)
		s.main, s.hasMain = names, true
		return err
	case keyIgnore:
		names, err := names(value)
		s.ignore = names
		return err
	case "wait-for":
		names, err := names(value)
		s.waitFor, s.hasWaitFor = names, true
		return err
	}
	base, container, perSidecar := strings.Cut(key, ".")
	o, ok := option(base)
	if !ok {
		return fmt.Errorf("unknown annotation; known: %s", knownKeys())
	}
	if err := o.check(value); err != nil {
		return err
	}
	switch {
	case o.Main && perSidecar:
		return fmt.Errorf("%s is set on the Pod for the main container, not per sidecar: use %s%s", o.Key, Prefix, o.Key)
	case o.Main:
		s.main1[o.Key] = value
	case perSidecar:
		if err := sidecarname.Valid(container); err != nil {
			return fmt.Errorf("after %q comes a container name: %w", o.Key+".", err)
		}
		if s.sidecar[container] == nil {
			s.sidecar[container] = map[string]string{}
		}
		s.sidecar[container][o.Key] = value
	case o.PodWide:
		s.podWide[o.Key] = value
	default:
		return fmt.Errorf("%s is set per sidecar: use %s%s.CONTAINER", o.Key, Prefix, o.Key)
	}
	return nil
}

func knownKeys() string {
	keys := []string{keyMain, keyIgnore}
	for _, o := range Options {
		switch {
		case o.Main:
			keys = append(keys, o.Key)
		case o.PodWide:
			keys = append(keys, o.Key, o.Key+".NAME")
		default:
			keys = append(keys, o.Key+".NAME")
		}
	}
	return strings.Join(keys, ", ")
}

// names parses a comma-separated list of container names ("" is none),
// dropping repeats, by the rule sidecar-watch applies to the same lists.
func names(value string) ([]string, error) {
	list, err := sidecarname.ParseList([]string{value})
	if err != nil {
		return nil, fmt.Errorf("want container names separated by commas: %w", err)
	}
	if len(list) == 0 {
		return nil, nil
	}
	return list, nil
}

// parses is an Option's check: a parser's error, its value dropped.
func parses[T any](parse func(string) (T, error)) func(string) error {
	return func(v string) error { _, err := parse(v); return err }
}

// AnnotateOps sets the annotation name of the object raw to value:
// for what a front end records in an object inject has not planned (the
// webhook's reason for a Pod it admits without job-signal). Metadata and
// annotations are created when absent or null; raw is read for nothing
// else.
func AnnotateOps(raw []byte, name, value string) []Op {
	var obj struct {
		Metadata *struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	metadata, annotations := absent, absent
	if kjson.UnmarshalCaseSensitivePreserveInts(raw, &obj); obj.Metadata != nil {
		metadata = present
		if obj.Metadata.Annotations != nil {
			annotations = present
		}
	}
	return annotationOps(metadata, annotations, Fields{{name, value}})
}

// annotationOps sets the annotations all, given whether metadata and its
// annotations are present.
func annotationOps(metadata, annotations presence, all Fields) []Op {
	switch {
	case metadata != present:
		return []Op{{Op: "add", Path: "/metadata", Value: Fields{{"annotations", all}}}}
	case annotations != present:
		return []Op{{Op: "add", Path: "/metadata/annotations", Value: all}}
	}
	ops := make([]Op, len(all))
	for i, f := range all {
		ops[i] = Op{Op: "add", Path: Pointer("metadata", "annotations", f.Key), Value: f.Value}
	}
	return ops
}

// AnnotationExitCodeRules on a Pod template says which containers the
// Job's podFailurePolicy judges by their exit codes: "*" when a rule with
// onExitCodes names no container (the Job controller then matches it
// against every container, init containers and native sidecars among
// them), else the names its rules give, comma-separated. The webhook
// writes it on a Job's template when the Job is created, since a Pod's
// admission does not see its Job; the plugin reads the Job itself.
const AnnotationExitCodeRules = Prefix + "exit-code-rules"

// ExitCodeRulesOf is the value of AnnotationExitCodeRules for a Job's
// podFailurePolicy: "" when no rule reads an exit code.
func ExitCodeRulesOf(policy *batchv1.PodFailurePolicy) string {
	if policy == nil {
		return ""
	}
	var names []string
	for _, r := range policy.Rules {
		switch {
		case r.OnExitCodes == nil:
		case r.OnExitCodes.ContainerName == nil || *r.OnExitCodes.ContainerName == "":
			return "*"
		default:
			names = append(names, *r.OnExitCodes.ContainerName)
		}
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ",")
}

// judged is which containers a Job's podFailurePolicy judges by exit code.
type judged struct {
	all   bool
	names []string
}

func (j judged) judges(name string) bool { return j.all || slices.Contains(j.names, name) }

// parseExitCodeRules reads a value of AnnotationExitCodeRules (or
// Target.ExitCodeRules): "" for none, "*", or container names.
func parseExitCodeRules(value string) (judged, error) {
	if strings.TrimSpace(value) == "*" {
		return judged{all: true}, nil
	}
	list, err := names(value)
	if err != nil {
		return judged{}, fmt.Errorf(`want "*" or container names separated by commas: %w`, err)
	}
	return judged{names: list}, nil
}

// exitCodeRules is the one reading of which containers the Job judges by
// exit code, from both ways the fact arrives: the caller's Target (the
// plugin reads the Job) and the template's annotation (the webhook writes
// it at the Job's creation). Either naming a container is enough.
func exitCodeRules(target string, annotation judged) (judged, error) {
	j, err := parseExitCodeRules(target)
	if err != nil {
		return judged{}, fmt.Errorf("inject: Target.ExitCodeRules %q: %w", target, err)
	}
	j.all = j.all || annotation.all
	for _, n := range annotation.names {
		if !slices.Contains(j.names, n) {
			j.names = append(j.names, n)
		}
	}
	return j, nil
}
