package inject

import "slices"

// fieldsBefore and fieldsAfter are Kubernetes' own field order, as
// kubectl get and the API reference write objects, for the members
// Inject adds: a new member goes before the first of fieldsBefore that
// is there, else after the first of fieldsAfter that is there.
var (
	fieldsBefore = map[string][]string{"command": {"args", "workingDir"}, "args": {"workingDir"}, "initContainers": {"containers"}, "metadata": {"spec"}}
	fieldsAfter  = map[string][]string{"command": {"image", "name"}, "args": {"command", "image", "name"}}
)

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
