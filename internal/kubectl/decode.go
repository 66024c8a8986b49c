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

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
)

// parse reads a document as kubectl does and decides each of its Pod
// templates (for uninject, the changes too). nil for a document without
// templates.
func parse(d *document, injecting bool) (*parsed, []string, error) {
	js, v, err := decodeDocument(d)
	if err != nil && !holdsTemplates(d) {
		return nil, nil, nil // passed through, whatever it holds (a key twice, say)
	}
	if err != nil || v == nil {
		return nil, nil, err
	}
	return parseDecoded(d, js, v, injecting)
}

// parseDecoded is parse of a document decoded already: js and v are its
// meaning.
func parseDecoded(d *document, js []byte, v any, injecting bool) (*parsed, []string, error) {
	templates, notes, err := findTemplates(d, v, "", "", "")
	if err != nil || len(templates) == 0 {
		return nil, notes, err
	}
	p := &parsed{doc: d, json: js, value: v}
	var errs []error
	for _, t := range templates {
		pd := &pod{template: t}
		var err error
		if injecting {
			pd.plan, err = inject.PrepareDecoded(t.obj)
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
		pd.platform = resolve.Platform{OS: "linux", Architecture: nodeArch(t.obj)}
		p.pods = append(p.pods, pd)
	}
	return p, notes, errors.Join(errs...)
}

// decodeDocument reads a document the way kubectl reads it: a JSON value
// with encoding/json, YAML with sigs.k8s.io/yaml (the reader under
// apimachinery's YAML-or-JSON decoder) converted to JSON. It is strict: a
// key twice in one mapping is refused, naming it and its line, since
// kubectl keeps the last and other readers the first. js is the
// document's meaning as JSON, v the same as generic values (numbers as
// json.Number); both nil for a document with nothing but comments.
func decodeDocument(d *document) (js []byte, v any, err error) {
	return decode(d, true)
}

// decode is decodeDocument, strict or not.
func decode(d *document, strict bool) (js []byte, v any, err error) {
	if d.json {
		js = []byte(strings.TrimSpace(d.raw))
		if strict {
			_, v, err = readJSON(d.raw)
			return js, v, jsonError(d, err)
		}
	} else {
		toJSON := sigsyaml.YAMLToJSON
		if strict {
			toJSON = sigsyaml.YAMLToJSONStrict
		}
		js, err = toJSON([]byte(d.raw))
		if err != nil {
			return nil, nil, yamlError(d, err)
		}
	}
	v, err = decodeValue(js)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: malformed JSON: %w", d, err)
	}
	if v == nil {
		return nil, nil, nil
	}
	return js, v, nil
}

// decodeValue reads one JSON value, numbers as json.Number (as exact as
// the text).
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

// yamlError turns the YAML reader's error about d into one line that
// names the line in the whole input and what to do.
func yamlError(d *document, err error) error {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
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
			return fmt.Errorf("%s: %s", d, absoluteLines(d, err))
		}
	}
	msg = strings.ReplaceAll(strings.TrimPrefix(msg, "yaml: unmarshal errors:\n  "), "\n", ";")
	return fmt.Errorf("%s: malformed YAML: %s", d, absoluteLines(d, errors.New(msg)))
}

// jsonError names the line of an error about d in the whole input.
func jsonError(d *document, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %s", d, absoluteLines(d, err))
	}
	return nil
}

// twice is the refusal of a key twice in one mapping or object (key as
// the reader quotes it).
func twice(key, in string, line int) error {
	return fmt.Errorf("key %s is twice in one %s (line %d): kubectl keeps the last, other readers the first; keep one", key, in, line)
}

// holdsTemplates says whether a document, read leniently, holds a Pod
// template: one that does not is passed through, even with a key twice.
func holdsTemplates(d *document) bool {
	_, v, err := decode(d, false)
	if err != nil {
		return true
	}
	templates, _, err := findTemplates(d, v, "", "", "")
	return err != nil || len(templates) > 0
}
