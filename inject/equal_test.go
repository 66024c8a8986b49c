package inject_test

import (
	"fmt"
	"maps"
	"testing"

	"github.com/job-signal/job-signal/internal/version"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/job-signal/job-signal/inject"
)

// specDiff is "" when the two Pod templates are the same (an empty
// annotation map is the same as none), else both side by side.
func specDiff(a corev1.PodSpec, aAnn map[string]string, b corev1.PodSpec, bAnn map[string]string) string {
	if equality.Semantic.DeepEqual(a, b) && (len(aAnn) == 0 && len(bAnn) == 0 || maps.Equal(aAnn, bAnn)) && nilness(a) == nilness(b) {
		return ""
	}
	ya, _ := yaml.Marshal(map[string]any{"annotations": aAnn, "spec": a})
	yb, _ := yaml.Marshal(map[string]any{"annotations": bAnn, "spec": b})
	return fmt.Sprintf("--- first\n%s--- second\n%s%s\n%s", ya, yb, nilness(a), nilness(b))
}

// nilness tells absent lists from empty ones, which DeepEqual of the
// semantic kind does not.
func nilness(s corev1.PodSpec) string {
	out := fmt.Sprintf("volumes:%v init:%v", s.Volumes == nil, s.InitContainers == nil)
	for _, c := range s.Containers {
		out += fmt.Sprintf(" %s:%v/%v/%v", c.Name, c.Command == nil, c.Args == nil, c.VolumeMounts == nil)
	}
	return out
}

// roundTrips checks, for res = inject(spec, ann), that uninject(res) is
// the input again, that injecting res changes nothing (and needs no image
// lookup), and that res needs no registry.
func roundTrips(t *testing.T, spec corev1.PodSpec, ann map[string]string, res inject.Result) {
	t.Helper()
	back, err := inject.Uninject(res.Spec, res.Annotations)
	if err != nil {
		t.Fatalf("uninject: %v", err)
	}
	if d := specDiff(spec, ann, back.Spec, back.Annotations); d != "" {
		t.Fatalf("uninject(inject(x)) != x:\n%s", d)
	}
	again, err := inject.Inject(inject.Input{Spec: res.Spec, Annotations: res.Annotations, Installer: version.Image})
	if err != nil {
		t.Fatalf("inject again (without images: none must be needed): %v", err)
	}
	if d := specDiff(res.Spec, res.Annotations, again.Spec, again.Annotations); d != "" {
		t.Fatalf("inject(inject(x)) != inject(x):\n%s", d)
	}
	if needs, err := inject.Needs(res.Spec, res.Annotations); err != nil || len(needs) > 0 {
		t.Fatalf("an injected Pod needs %v, %v", needs, err)
	}
}
