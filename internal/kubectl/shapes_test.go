package kubectl

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestShapes runs realistic manifests (testdata/shapes, modelled on how
// public charts and docs lay out Jobs with these sidecars) through inject
// and compares with golden files (-update rewrites them), and checks on
// each: the diff only adds or changes lines, uninject gives back the
// input byte for byte, inject twice is inject once, and a YAML 1.1 reader
// (kubectl's) reads the output as yaml.v3 does.
func TestShapes(t *testing.T) {
	checkShapes(t, testRegistry(t), "injected")
}

// checkShapes is TestShapes with opts, its goldens NAME.SUFFIX.EXT.
func checkShapes(t *testing.T, opts *Options, suffix string) {
	inputs, _ := filepath.Glob("testdata/shapes/*")
	for _, in := range inputs {
		if strings.Contains(in, ".injected.") || strings.Contains(in, ".native.") {
			continue
		}
		name := filepath.Base(in)
		t.Run(name, func(t *testing.T) {
			input, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var stdout, errOut bytes.Buffer
			err = Run(context.Background(), bytes.NewReader(input), &stdout, &errOut, opts)
			out, stderr := stdout.String(), errOut.String()
			ext := filepath.Ext(name)
			if err != nil && suffix == "injected" {
				t.Fatalf("inject: %v\n%s", err, stderr)
			}
			if err != nil { // a refusal of this form is its golden
				golden(t, "testdata/shapes/"+strings.TrimSuffix(name, ext)+"."+suffix+ext, stderrNote(err.Error(), ext))
				return
			}
			golden(t, "testdata/shapes/"+strings.TrimSuffix(name, ext)+"."+suffix+ext, out+stderrNote(stderr, ext))
			if bad := removedLines(string(input), out); len(bad) > 0 && suffix == "injected" { // native moves lines

				t.Errorf("inject's diff removes lines: %q", bad)
			}
			var twice bytes.Buffer
			err = Run(context.Background(), strings.NewReader(out), &twice, io.Discard, opts)
			if again := twice.String(); err != nil || again != out {
				t.Errorf("inject twice differs (%v):\n%s", err, again)
			}
			back, _, err := run(t, out, false)
			if err != nil || back != string(input) {
				t.Errorf("uninject(inject(x)) != x (%v):\n%q\n%q", err, back, input)
			}
			if ext == ".yaml" {
				sameMeaning(t, out)
			}
			if ext == ".json" {
				stillJSON(t, out)
			}
		})
	}
}

func stderrNote(stderr, ext string) string {
	if stderr == "" {
		return ""
	}
	if ext == ".json" {
		return "\n// stderr:\n// " + strings.ReplaceAll(strings.TrimSpace(stderr), "\n", "\n// ") + "\n"
	}
	return "# stderr:\n# " + strings.ReplaceAll(strings.TrimSpace(stderr), "\n", "\n# ") + "\n"
}

// removedLines returns the lines of before that after loses: a line diff
// (longest common subsequence) where a hunk removes more lines than it
// adds, and the lines it removes appear nowhere in after (a line moved,
// as "args:" when command and args are both block lists, is kept).
func removedLines(before, after string) []string {
	a, b := strings.SplitAfter(before, "\n"), strings.SplitAfter(after, "\n")
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var lost []string
	var removed []string
	added := 0
	flush := func() {
		if len(removed) > added {
			for _, r := range removed {
				if !strings.Contains(after, strings.TrimRight(r, "\r\n")) {
					lost = append(lost, r)
				}
			}
		}
		removed, added = nil, 0
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			flush()
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			added++
			j++
		default:
			removed = append(removed, a[i])
			i++
		}
	}
	flush()
	return lost
}

// sameMeaning: every document of text means the same to sigs.k8s.io/yaml
// (YAML 1.1, as kubectl reads it) and to the yaml.v3 reader inject uses.
func sameMeaning(t *testing.T, text string) {
	t.Helper()
	docs, err := readDocuments(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		root, err := parseDocument(d)
		if err != nil || root == nil {
			continue
		}
		x, err := meaning(root)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := yaml.YAMLToJSON([]byte(d.raw))
		if err != nil {
			t.Errorf("%s: kubectl's YAML reader refuses it: %v", d, err)
			continue
		}
		y, _ := decodeValue(theirs)
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s: YAML 1.1 reads it differently:\n%s\n%s", d, mustJSON(x), theirs)
		}
	}
}

// stillJSON: JSON comes back as a stream of JSON values (after a
// byte-order mark, if it has one).
func stillJSON(t *testing.T, text string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(strings.TrimPrefix(text, "\ufeff")))
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			return
		} else if err != nil {
			t.Errorf("output is not JSON: %v", err)
			return
		}
	}
}
