package kubectl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
)

// parse reads a document as kubectl does and decides each of its Pod
// templates for target (nil: uninject, with its changes); nil for a
// document without templates.
func parse(d *document, target *inject.Target) (*parsed, []string, error) {
	v, err := decode(d, true)
	if err != nil && !holdsTemplates(d) {
		return nil, nil, nil // passed through, whatever it holds (a key twice, say)
	}
	if err != nil || v == nil {
		return nil, nil, err
	}
	return parseDecoded(d, v, target)
}

// parseDecoded is parse of a document whose meaning is v.
func parseDecoded(d *document, v any, target *inject.Target) (*parsed, []string, error) {
	templates, notes, err := findTemplates(d, v, "", "", "")
	if err != nil || len(templates) == 0 {
		return nil, notes, err
	}
	p := &parsed{doc: d, value: v}
	var errs []error
	for _, t := range templates {
		pd := &pod{template: t}
		var err error
		if target != nil {
			tt := *target
			tt.ExitCodeRules = t.exitCodeRules
			pd.plan, err = inject.PrepareDecodedFor(t.obj, tt)
			if err == nil && pd.plan.Nothing() != "" {
				notes = append(notes, fmt.Sprintf("%s: left unchanged: %s", t.where, pd.plan.Nothing()))
			}
		} else {
			var res inject.Result
			res, err = inject.UninjectDecoded(t.obj)
			pd.ops = res.Ops
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.where, err))
			continue
		}
		arch := scalar(mapValue(mapValue(t.obj, "spec"), "nodeSelector"), "kubernetes.io/arch")
		pd.platform = resolve.Platform{OS: "linux", Architecture: arch}
		p.pods = append(p.pods, pd)
	}
	return p, notes, errors.Join(errs...)
}

// decode reads a document as kubectl does: JSON with encoding/json, YAML
// as sigs.k8s.io/yaml does. Strict, a key twice in one mapping is refused
// (kubectl keeps the last, other readers the first). v is its meaning,
// numbers as json.Number; nil for a document with nothing but comments.
func decode(d *document, strict bool) (any, error) {
	if d.json && strict {
		_, v, err := readJSON(d.raw)
		return v, lineError(d, "", err)
	}
	if d.json {
		v, err := decodeValue([]byte(d.raw))
		if err != nil {
			return nil, fmt.Errorf("%s: malformed JSON: %w", d, err)
		}
		return v, nil
	}
	// As kubectl hands it to the YAML parser: apimachinery's YAMLReader ends
	// every line with "\n", the last and those that ended with "\r\n" too
	// (TestDocumentsAsKubectl).
	text := strings.ReplaceAll(d.raw, "\r\n", "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	v, err := yamlValue([]byte(text), strict)
	if err != nil {
		return nil, yamlError(d, err)
	}
	return v, nil
}

// yamlValue reads YAML as sigs.k8s.io/yaml does for kubectl (yaml.v2,
// then jsonable), without writing JSON and reading it back.
func yamlValue(raw []byte, strict bool) (any, error) {
	var v any
	unmarshal := yamlv2.Unmarshal
	if strict {
		unmarshal = yamlv2.UnmarshalStrict
	}
	if err := unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return jsonable(v)
}

// jsonable is a value of yaml.v2 as sigs.k8s.io/yaml writes it as JSON,
// read back with numbers as json.Number.
func jsonable(v any) (any, error) {
	switch v := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			var key string
			switch k := k.(type) {
			case string:
				key = k
			case int, int64, bool:
				key = fmt.Sprint(k)
			case float64:
				key = strings.NewReplacer("+Inf", ".inf", "-Inf", "-.inf", "NaN", ".nan").Replace(strconv.FormatFloat(k, 'g', -1, 32))
			default:
				return nil, fmt.Errorf("unsupported map key of type: %T, key: %+#v", k, k)
			}
			var err error
			if m[key], err = jsonable(x); err != nil {
				return nil, err
			}
		}
		return m, nil
	case []any:
		for i, x := range v { // in place: the list is the caller's to give
			var err error
			if v[i], err = jsonable(x); err != nil {
				return nil, err
			}
		}
		return v, nil
	case nil, bool:
		return v, nil
	case int:
		return json.Number(strconv.Itoa(v)), nil
	case string:
		if utf8.ValidString(v) {
			return v, nil
		}
	}
	b, err := json.Marshal(v) // other numbers, and what JSON escapes
	if err != nil {
		return nil, err
	}
	return decodeValue(b)
}

// decodeValue reads one JSON value, numbers as json.Number.
func decodeValue(js []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one value")
	}
	return v, nil
}

var (
	duplicateYAML = regexp.MustCompile(`line (\d+): key (.*) already set in map`)
	templateMark  = regexp.MustCompile(`\{\{-?\s*[-.$a-zA-Z/(]`)
)

// yamlError is the YAML reader's error about d on one line, naming the
// line in the whole input and what to do.
func yamlError(d *document, err error) error {
	msg := err.Error()
	if m := duplicateYAML.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return fmt.Errorf("%s: %w", d, twice(m[2], "mapping", d.line+n-1))
	}
	if loc := templateMark.FindStringIndex(d.raw); loc != nil {
		line := d.line + strings.Count(d.raw[:loc[0]], "\n")
		return fmt.Errorf("%s: this is a Helm template ({{ ... }} at line %d), not a manifest: render it first, e.g. `helm template RELEASE CHART | kubectl job-signal inject -f -`", d, line)
	}
	var root yaml.Node
	if strings.Contains(msg, "excessive aliasing") && yaml.Unmarshal([]byte(d.raw), &root) == nil {
		if err := checkAliases(&root); err != nil {
			return lineError(d, "", err)
		}
	}
	msg = strings.ReplaceAll(strings.TrimPrefix(msg, "yaml: unmarshal errors:\n  "), "\n", ";")
	return lineError(d, "malformed YAML: ", errors.New(msg))
}

// twice refuses a key (quoted as the reader quotes it) twice in one
// mapping or object.
func twice(key, in string, line int) error {
	return fmt.Errorf("key %s is twice in one %s (line %d): kubectl keeps the last, other readers the first; keep one", key, in, line)
}

// holdsTemplates says whether a document, read leniently, holds a Pod
// template: one that does not is passed through, even with a key twice.
func holdsTemplates(d *document) bool {
	v, err := decode(d, false)
	if err != nil {
		return true
	}
	templates, _, err := findTemplates(d, v, "", "", "")
	return err != nil || len(templates) > 0
}
