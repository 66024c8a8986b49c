package kubectl

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/job-signal/job-signal/inject"
)

// template is one Pod template found in a document, as kubectl reads it.
type template struct {
	where  string         // "document 2 (line 14), Job nightly-export, spec.template"
	obj    map[string]any // the object holding metadata and spec
	prefix string         // its JSON Pointer in the document
	// The object's metadata.namespace ("": the default one), and what its
	// Job's podFailurePolicy judges by exit code (inject.ExitCodeRulesOf).
	namespace, exitCodeRules string
}

// neverComplete are the kinds whose Pods are restarted when they end.
var neverComplete = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true, "ReplicationController": true}

// podKinds are the kinds that hold a Pod template, and the path to it.
var podKinds = map[string][]string{
	"Pod":     nil,
	"Job":     {"spec", "template"},
	"CronJob": {"spec", "jobTemplate", "spec", "template"},
}

// findTemplates returns the Pod templates of the object v (a Job,
// CronJob, Pod or a List of them), and notes for kinds passed through;
// implied is the kind of an item of a typed list.
func findTemplates(d *document, v any, where, pointer, implied string) (found []template, notes []string, err error) {
	root, isObject := v.(map[string]any)
	if !isObject {
		return nil, nil, nil // not an object: passed through
	}
	kind := cmp.Or(scalar(root, "kind"), implied)
	apiVersion := scalar(root, "apiVersion")
	name := scalar(mapValue(root, "metadata"), "name")
	label := shown(strings.TrimSpace(kind + " " + name))
	if where == "" {
		where = fmt.Sprintf("%s, %s", d, label)
	} else {
		where = fmt.Sprintf("%s (%s)", where, label)
	}
	path, isPod := podKinds[kind]
	ours := apiVersion == "" || strings.HasPrefix(apiVersion, "batch/") // Kubernetes' own group for kind
	if kind == "Pod" {
		ours = apiVersion == "" || apiVersion == "v1"
	}
	switch {
	case isPod && !ours:
		return nil, []string{fmt.Sprintf("%s: left unchanged: apiVersion %s is not Kubernetes' own %s", where, shown(apiVersion), kind)}, nil
	case isPod:
	case strings.HasSuffix(kind, "List"):
		return findInList(d, root, kind, where, pointer)
	case neverComplete[kind]:
		return nil, []string{fmt.Sprintf("%s: left unchanged: a %s restarts its Pods when they end, so they never complete; job-signal is for Jobs, CronJobs and Pods that end", where, kind)}, nil
	default:
		return nil, nil, nil
	}
	obj, jobSpec := root, map[string]any(nil)
	for i, key := range path {
		if i == len(path)-1 {
			jobSpec = obj // a Job's spec, or a CronJob's jobTemplate's
		}
		obj = mapValue(obj, key)
		if obj == nil {
			return nil, nil, fmt.Errorf("%s: %s is missing or not an object", where, strings.Join(path, "."))
		}
	}
	rules, err := exitCodeRules(jobSpec)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s%w", where, strings.Join(path[:len(path)-1], "."), err)
	}
	if len(path) > 0 {
		where += ", " + strings.Join(path, ".")
	}
	if mapValue(obj, "spec") == nil {
		return nil, nil, fmt.Errorf("%s: spec is missing or not an object", where)
	}
	namespace := scalar(mapValue(root, "metadata"), "namespace")
	return []template{{where: where, obj: obj, prefix: pointer + inject.Pointer(path...), namespace: namespace, exitCodeRules: rules}}, nil, nil
}

// findInList looks into items: a typed list holds one kind, a List any.
func findInList(d *document, root map[string]any, kind, where, pointer string) (found []template, notes []string, err error) {
	if root["items"] == nil {
		return nil, nil, nil
	}
	items, isList := root["items"].([]any)
	if !isList {
		return nil, nil, fmt.Errorf("%s: items is not a list", where)
	}
	itemKind := strings.TrimSuffix(kind, "List")
	for i, v := range items {
		at := fmt.Sprintf("%s, items[%d]", where, i)
		item, isObject := v.(map[string]any)
		if !isObject {
			return nil, nil, fmt.Errorf("%s: not an object", at)
		}
		k := scalar(item, "kind")
		switch {
		case itemKind != "" && k != "" && k != itemKind:
			return nil, nil, fmt.Errorf("%s.kind is %s, but a %s holds only %ss: split the list or make it a List", at, shown(k), shown(kind), shown(itemKind))
		case itemKind == "" && k == "":
			return nil, nil, fmt.Errorf("%s: kind is missing", at)
		}
		t, n, err := findTemplates(d, item, at, pointer+inject.Pointer("items", fmt.Sprint(i)), itemKind)
		if err != nil {
			return nil, nil, err
		}
		found, notes = append(found, t...), append(notes, n...)
	}
	return found, notes, nil
}

// shown is a name from the document on one line, at most 253 bytes.
func shown(s string) string { return inject.OneLine(s, 253) }

// mapValue is the object at key of obj, or nil.
func mapValue(obj map[string]any, key string) map[string]any {
	v, _ := obj[key].(map[string]any)
	return v
}

// exitCodeRules is which containers a Job's podFailurePolicy (in
// jobSpec; nil for a Pod) judges by exit code, as inject reads it. A
// policy that is no PodFailurePolicy is an error, as the API server's.
func exitCodeRules(jobSpec map[string]any) (string, error) {
	v := jobSpec["podFailurePolicy"]
	if v == nil {
		return "", nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf(".podFailurePolicy: %w", err)
	}
	var policy batchv1.PodFailurePolicy
	if err := json.Unmarshal(b, &policy); err != nil {
		return "", fmt.Errorf(".podFailurePolicy is not a podFailurePolicy: %s", inject.OneLine(err.Error(), inject.MaxReason))
	}
	return inject.ExitCodeRulesOf(&policy), nil
}

// scalar is the string at key of obj, or "".
func scalar(obj map[string]any, key string) string {
	s, _ := obj[key].(string)
	return s
}
