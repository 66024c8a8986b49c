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

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
)

// parse reads a document as kubectl does and decides each of its Pod
// templates for target (target nil: uninject, which decides the changes
// too). nil for a document without templates.
func parse(d *document, target *inject.Target) (*parsed, []string, error) {
	js, v, err := decodeDocument(d)
	if dup := (*duplicateKey)(nil); errors.As(err, &dup) && !holdsTemplates(d) {
		return nil, nil, nil // passed through, whatever it holds
	}
	if err != nil || v == nil {
		return nil, nil, err
	}
	return parseDecoded(d, js, v, target)
}

// parseDecoded is parse of a document decoded already: js and v are its
// meaning. target nil: uninject.
func parseDecoded(d *document, js []byte, v any, target *inject.Target) (*parsed, []string, error) {
	templates, notes, err := findTemplates(d, v, "", "", "")
	if err != nil || len(templates) == 0 {
		return nil, notes, err
	}
	p := &parsed{doc: d, json: js, value: v}
	var errs []error
	for _, t := range templates {
		pd := &pod{template: t}
		var err error
		if target != nil {
			pd.plan, err = inject.PrepareDecodedFor(t.obj, *target)
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
		if err := jsonDuplicates(d); err != nil && strict {
			return nil, nil, fmt.Errorf("%s: %w", d, err)
		}
		js = []byte(strings.TrimSpace(d.raw))
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
		return fmt.Errorf("%s: %w", d, &duplicateKey{key: m[2], line: d.line + n - 1, in: "mapping"})
	}
	if loc := templateMark.FindStringIndex(d.raw); loc != nil {
		line := d.line + strings.Count(d.raw[:loc[0]], "\n")
		return fmt.Errorf("%s: this is a Helm template ({{ ... }} at line %d), not a manifest: render it first, e.g. `helm template RELEASE CHART | kubectl job-signal inject -f -`", d, line)
	}
	if strings.Contains(msg, "excessive aliasing") {
		if _, err := parseDocument(d); err != nil {
			return err // the alias check names where they expand
		}
	}
	msg = strings.ReplaceAll(strings.TrimPrefix(msg, "yaml: unmarshal errors:\n  "), "\n", ";")
	return fmt.Errorf("%s: malformed YAML: %s", d, absoluteLines(d, errors.New(msg)))
}

// jsonDuplicates refuses a JSON document with a key twice in one object,
// naming the key and its line. Malformed JSON is left to the decoder.
func jsonDuplicates(d *document) error {
	dec := json.NewDecoder(strings.NewReader(d.raw))
	err := jsonKeys(dec, 0)
	var dup *duplicateKey
	if !errors.As(err, &dup) {
		return nil
	}
	lead := len(d.raw) - len(strings.TrimLeft(d.raw, " \t\r\n"))
	dup.line = d.line + strings.Count(d.raw[lead:dup.offset], "\n")
	return dup
}

// duplicateKey is a key twice in one mapping or object.
type duplicateKey struct {
	key    string // as the reader quotes it
	offset int64  // in a JSON document
	line   int    // in the input
	in     string // "mapping" or "object"
}

func (e *duplicateKey) Error() string {
	return fmt.Sprintf("key %s is twice in one %s (line %d): kubectl keeps the last, other readers the first; keep one", e.key, e.in, e.line)
}

// jsonKeys reads one value from dec, failing on the first key that is
// twice in an object.
func jsonKeys(dec *json.Decoder, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested more than %d levels", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			if seen[key] {
				return &duplicateKey{key: strconv.Quote(key), offset: dec.InputOffset(), in: "object"}
			}
			seen[key] = true
			if err := jsonKeys(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		for dec.More() {
			if err := jsonKeys(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	}
	return err
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
