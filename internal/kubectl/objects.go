package kubectl

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// template is one Pod template found in a document: a mapping with
// metadata (annotations) and spec (a PodSpec).
type template struct {
	doc      *document
	where    string     // "document 2 (line 14), Job nightly-export, spec.template"
	obj      *yaml.Node // the mapping holding metadata and spec
	specNode *yaml.Node
}

// neverComplete are the kinds whose Pods are restarted when they end, so
// job-signal has nothing to do there; inject says so on stderr.
var neverComplete = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true, "ReplicationController": true}

// findTemplates returns the Pod templates of the object root (a Job,
// CronJob, Pod or a List of them), and notes for kinds passed through.
// implied is the kind of an item of a typed list, which may leave it out.
func findTemplates(d *document, root *yaml.Node, where, implied string) (found []template, notes []string, err error) {
	if root.Kind != yaml.MappingNode {
		return nil, nil, nil // not an object: passed through
	}
	kind := scalar(mapValue(root, "kind"))
	if kind == "" {
		kind = implied
	}
	name := scalar(mapValue(mapValue(root, "metadata"), "name"))
	label := strings.TrimSpace(kind + " " + name)
	if where == "" {
		where = fmt.Sprintf("%s, %s", d, label)
	} else {
		where = fmt.Sprintf("%s (%s)", where, label)
	}
	var path []string
	switch kind {
	case "Pod":
		return []template{{doc: d, where: where, obj: root, specNode: mapValue(root, "spec")}}, nil, needSpec(where, "spec", mapValue(root, "spec"))
	case "Job":
		path = []string{"spec", "template"}
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template"}
	default:
		if strings.HasSuffix(kind, "List") {
			return findInList(d, root, kind, where)
		}
		if neverComplete[kind] {
			notes = append(notes, fmt.Sprintf("%s: left unchanged: a %s restarts its Pods when they end, so they never complete; job-signal is for Jobs, CronJobs and Pods that end", where, kind))
		}
		return nil, notes, nil
	}
	obj := root
	for _, key := range path {
		obj = mapValue(obj, key)
		if obj == nil || obj.Kind != yaml.MappingNode {
			return nil, nil, fmt.Errorf("%s: %s is missing or not an object", where, strings.Join(path, "."))
		}
	}
	where += ", " + strings.Join(path, ".")
	spec := mapValue(obj, "spec")
	return []template{{doc: d, where: where, obj: obj, specNode: spec}}, nil, needSpec(where, "spec", spec)
}

func needSpec(where, field string, n *yaml.Node) error {
	if n == nil || n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: %s is missing or not an object", where, field)
	}
	return nil
}

// findInList looks into items. A typed list (JobList, PodList...) holds
// one kind only; a List may mix them, as kubectl get writes it.
func findInList(d *document, root *yaml.Node, kind, where string) (found []template, notes []string, err error) {
	items := mapValue(root, "items")
	if items == nil {
		return nil, nil, nil
	}
	if items.Kind != yaml.SequenceNode {
		return nil, nil, fmt.Errorf("%s: items is not a list", where)
	}
	itemKind := strings.TrimSuffix(kind, "List")
	for i, item := range items.Content {
		at := fmt.Sprintf("%s, items[%d]", where, i)
		if item.Kind != yaml.MappingNode {
			return nil, nil, fmt.Errorf("%s: not an object", at)
		}
		k := scalar(mapValue(item, "kind"))
		switch {
		case itemKind != "" && k != "" && k != itemKind:
			return nil, nil, fmt.Errorf("%s.kind is %s, but a %s holds only %ss: split the list or make it a List", at, k, kind, itemKind)
		case itemKind == "" && k == "":
			return nil, nil, fmt.Errorf("%s: kind is missing", at)
		}
		t, n, err := findTemplates(d, item, at, itemKind)
		if err != nil {
			return nil, nil, err
		}
		found, notes = append(found, t...), append(notes, n...)
	}
	return found, notes, nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
