package kubectl

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestYAMLValueAsKubectl: yamlValue gives what sigs.k8s.io/yaml's
// YAML-to-JSON conversion (kubectl's reader) gives, read with numbers as
// json.Number, and refuses what it refuses, strict and not.
func TestYAMLValueAsKubectl(t *testing.T) {
	texts := []string{
		"a: 1\nb: 1.50\nc: 1e3\nd: 0x10\ne: 0777\nf: 9223372036854775807\ng: 18446744073709551615\nh: -1.0e-7\n",
		"1: a\n2.5: b\ntrue: c\nnull: d\n",
		"a: on\nb: yes\nc: ~\nd: 2001-12-14\ne: 12:30\nf: !!binary aGk=\ng: \"\\xff\"\n",
		"a: .inf\n", "a: [.nan]\n", "{1.5: x}\n", "a: 1\na: 2\n", "a: [1, {b: c}, [d]]\n", "", "# only a comment\n",
	}
	files, _ := filepath.Glob("testdata/*/*.yaml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := readDocuments(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			texts = append(texts, d.raw)
		}
	}
	for _, text := range texts {
		for _, strict := range []bool{true, false} {
			toJSON := yaml.YAMLToJSON
			if strict {
				toJSON = yaml.YAMLToJSONStrict
			}
			var want any
			js, wantErr := toJSON([]byte(text))
			if wantErr == nil {
				want, wantErr = decodeValue(js)
			}
			got, err := yamlValue([]byte(text), strict)
			if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("%.60q (strict %v): %s (%v), kubectl's reader %s (%v)", text, strict, mustJSON(got), err, mustJSON(want), wantErr)
			}
		}
	}
}

// TestDocumentsAsKubectl: the documents of a stream, each decoded, are
// what kubectl's own reader (apimachinery's YAML-or-JSON decoder, which
// reads YAML a line at a time) gives: a "\r\n" is a line break, the last
// line ends with one, and "---#" starts a document.
func TestDocumentsAsKubectl(t *testing.T) {
	for _, text := range []string{
		"a: |+\r\r\nb: 1\r\n",
		"a: |+\n  x",
		"a: 1\n---#c\nb: 2\n",
		"a: 1\n--- # c\nb: 2\n",
		"a: \"x\ry\"\r\n",
		"a: |+\n  x\r",
		"a: |+\r\n  " + strings.Repeat("x", 5000) + "\r\n\r\r\n",
	} {
		want, err := kubectlReads(text)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := readDocuments(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		var got []any
		for _, d := range docs {
			v, err := decode(d, true)
			if err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			if v != nil {
				got = append(got, v)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %s, kubectl reads %s", text, mustJSON(got), mustJSON(want))
		}
	}
}
