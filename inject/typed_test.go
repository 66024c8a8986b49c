package inject

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// strictSpec is what typedFrom must agree with: the strict decoding of a
// PodSpec's JSON, and whether it found nothing to say.
func strictSpec(data []byte) (corev1.PodSpec, bool) {
	var spec corev1.PodSpec
	strict, err := kjson.UnmarshalStrict(data, &spec, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	return spec, err == nil && len(strict) == 0
}

// typedAsStrict reads data, the JSON of a spec, as templateOf does:
// typedFrom on the tree Parse gives when no key came twice. ok is false
// when it leaves the spec to strict decoding.
func typedAsStrict(data []byte) (spec corev1.PodSpec, ok bool) {
	if !json.Valid(data) { // templateOf's spec is one member's value
		return spec, false
	}
	raw, err := Parse(data)
	if err != nil || raw.Object == nil {
		return spec, false
	}
	n, ok := typedFrom(raw.Object, &spec)
	return spec, ok && (raw.noKeyTwice || n == colons(data))
}

// TestTypedFromShapes: every PodSpec of the realistic shapes (the inputs
// and what inject writes) is read from its tree, not left to strict
// decoding, and read as strict decoding reads it.
func TestTypedFromShapes(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "shapes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no shapes: %v", err)
	}
	specs := 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(text), "\n---") {
			var obj any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				continue // the shapes that are not YAML are inject's refusals' business
			}
			for _, s := range podSpecs(obj) {
				data, err := json.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				want, strictOK := strictSpec(data)
				if !strictOK {
					continue
				}
				specs++
				got, ok := typedAsStrict(data)
				if !ok || !reflect.DeepEqual(got, want) {
					t.Errorf("%s, document %d: typedFrom read %v:\n%+v\nstrict decoding:\n%+v", file, i, ok, got, want)
				}
			}
		}
	}
	if specs < 50 {
		t.Errorf("only %d PodSpecs in the shapes", specs)
	}
}

// podSpecs finds the objects with containers in a document.
func podSpecs(x any) []map[string]any {
	var out []map[string]any
	switch x := x.(type) {
	case map[string]any:
		if _, ok := x["containers"]; ok {
			return []map[string]any{x}
		}
		for _, e := range x {
			out = append(out, podSpecs(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, podSpecs(e)...)
		}
	}
	return out
}

// TestTypedFromDeclines: what strict decoding refuses or remarks on, and
// a key given twice, are left to it.
func TestTypedFromDeclines(t *testing.T) {
	for _, in := range []string{
		`{"containers":[{"name":"a","Image":"x"}]}`,                            // a field in other case
		`{"containers":[{"name":"a","image":"x","image":"y"}]}`,                // a key twice
		`{"containers":[{"name":"a"}],"containers":[{"name":"b"}]}`,            // at the top too
		`{"containers":[{"name":1}]}`,                                          // a number for a string
		`{"containers":[{"name":"a","ports":[{"containerPort":1.5}]}]}`,        // a fraction for an int
		`{"containers":[{"name":"a","ports":[{"containerPort":4294967296}]}]}`, // too large for int32
		`{"containers":[{"name":"a"}],"terminationGracePeriodSeconds":"30"}`,   // a string for an int
		`{"containers":{"name":"a"}}`,                                          // an object for a list
		`{"containers":[{"name":"a","resources":{"limits":{"cpu":"lots"}}}]}`,  // not a quantity
		`{"containers":[{"name":"a"}],"newerThanThisBuild":true}`,              // an unknown field
		// FieldsV1 keeps its bytes as written, which a value written again
		// would not give (keys sorted, "<" escaped)
		`{"containers":[{"name":"a"}],"volumes":[{"name":"v","ephemeral":{"volumeClaimTemplate":{"metadata":{"managedFields":[{"fieldsV1":{"f:b":{},"f:a":{}}}]},"spec":{}}}}]}`,
		`{"containers":[{"name":"a"}],"volumes":[{"name":"v","ephemeral":{"volumeClaimTemplate":{"metadata":{"managedFields":[{"fieldsV1":"a<b"}]},"spec":{}}}}]}`,
	} {
		if _, ok := typedAsStrict([]byte(in)); ok {
			t.Errorf("%s: read from the tree, want it left to strict decoding", in)
		}
	}
	for _, in := range []string{
		`{"containers":[{"name":"a","image":null,"args":[],"env":null,"resources":{"limits":{"cpu":1,"memory":"64Mi"}},` +
			`"readinessProbe":{"tcpSocket":{"port":"db"},"periodSeconds":2}}],"volumes":[{"name":"v","emptyDir":{}}],"nodeSelector":{"a":null}}`,
		`{"containers":[{"name":"a:b","command":["x:y","\"z\":"]}],"activeDeadlineSeconds":null}`,
		`{"containers":[{"name":"a"}],"volumes":[{"name":"v","ephemeral":{"volumeClaimTemplate":{"metadata":{"creationTimestamp":"2026-01-02T03:04:05Z"},"spec":{}}}}]}`,
	} {
		want, strictOK := strictSpec([]byte(in))
		got, ok := typedAsStrict([]byte(in))
		if !strictOK || !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: typedFrom %v %+v, strict decoding %v %+v", in, ok, got, strictOK, want)
		}
	}
}

// FuzzTypedFrom: whatever typedFrom reads from the tree, strict decoding
// reads the same, with nothing to say.
func FuzzTypedFrom(f *testing.F) {
	for _, s := range []string{
		`{"containers":[{"name":"a","image":"x","ports":[{"containerPort":80}],"resources":{"requests":{"cpu":"250m"}}}]}`,
		`{"containers":[{"name":"a","livenessProbe":{"httpGet":{"port":8080,"path":"/"}}}],"volumes":[{"name":"c","configMap":{"name":"x"}}]}`,
		`{"restartPolicy":"Never","terminationGracePeriodSeconds":30,"securityContext":{"fsGroup":2000},"initContainers":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := typedAsStrict(data)
		if !ok {
			return
		}
		want, strictOK := strictSpec(data)
		if !strictOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: typedFrom read %+v; strict decoding (nothing to say: %v) %+v", data, got, strictOK, want)
		}
	})
}

// BenchmarkTypedFrom is the reading of a PodSpec (a shape's: a Job with a
// classic sidecar) from its tree, and by strict decoding of its JSON, the
// reference.
func BenchmarkTypedFrom(b *testing.B) {
	text, err := os.ReadFile(filepath.Join("testdata", "shapes", "classic-sidecar.in.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	var obj any
	if err := yaml.Unmarshal(text, &obj); err != nil {
		b.Fatal(err)
	}
	data, err := json.Marshal(podSpecs(obj)[0])
	if err != nil {
		b.Fatal(err)
	}
	raw, err := Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("tree", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var spec corev1.PodSpec
			if _, ok := typedFrom(raw.Object, &spec); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("strict", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := strictSpec(data); !ok {
				b.Fatal("strict decoding had something to say")
			}
		}
	})
}
