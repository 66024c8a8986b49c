package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"
)

// Limits on what inject reads: the API server takes objects up to 3 MiB.
const (
	MaxDocument = 16 << 20
	MaxInput    = 256 << 20
)

// document is one YAML document or JSON value of the input.
type document struct {
	index int    // from 1, as errors name it
	line  int    // first line in the input
	sep   string // the "---" line before it, verbatim ("" for none), or a byte-order mark
	raw   string // its text, as read
	json  bool
}

func (d *document) String() string { return fmt.Sprintf("document %d (line %d)", d.index, d.line) }

// readDocuments splits the input into documents: a YAML stream separated
// by "---" lines, or, when it starts with '{', a stream of JSON values. A
// byte-order mark is no part of the first document, but written back.
func readDocuments(r io.Reader) ([]*document, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	if len(data) > MaxInput {
		return nil, fmt.Errorf("input is larger than %d MiB; split it", MaxInput>>20)
	}
	data, bom := bytes.CutPrefix(data, []byte(byteOrderMark))
	var docs []*document
	if bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
		docs, err = splitJSON(data)
	}
	if docs == nil && (err == nil || flowYAML(data, err)) {
		docs, err = splitYAML(data)
	}
	if err == nil && bom && len(docs) > 0 {
		docs[0].sep = byteOrderMark + docs[0].sep
	}
	return docs, err
}

// docStart is a line that starts a document, as kubectl's reader
// (apimachinery's YAMLReader) splits a stream: "---", then at most spaces
// and a comment.
var docStart = regexp.MustCompile(`^---\s*(#.*)?$`)

func splitYAML(data []byte) ([]*document, error) {
	var docs []*document
	cur, start := &document{index: 1, line: 1}, 0 // start: of cur's text
	flush := func(end int) {
		cur.raw = string(data[start:end])
		docs = append(docs, cur)
	}
	pos, lineNo := 0, 1 // of line, which ends after its "\n"
	for line := range bytes.Lines(data) {
		if docStart.Match(bytes.TrimRight(line, "\r\n")) {
			if pos > start || cur.sep != "" || len(docs) > 0 {
				flush(pos)
				cur = &document{index: len(docs) + 1}
			}
			cur.sep, cur.line, start = string(line), lineNo+1, pos+len(line)
		}
		pos, lineNo = pos+len(line), lineNo+1
	}
	flush(len(data))
	for _, d := range docs {
		if len(d.raw) > MaxDocument {
			return nil, fmt.Errorf("%s is %d bytes, more than the %d MiB a document may have", d, len(d.raw), MaxDocument>>20)
		}
	}
	return docs, nil
}

// splitJSON splits a stream of JSON values, each with the bytes before
// it (the last one also those after it).
func splitJSON(data []byte) ([]*document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []*document
	prev := 0
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			if len(docs) > 0 {
				docs[len(docs)-1].raw += string(data[prev:])
			}
			return docs, nil
		}
		end := int(dec.InputOffset())
		begin := max(end-len(raw), 0)
		d := &document{index: len(docs) + 1, line: 1 + bytes.Count(data[:begin], []byte("\n")), json: true}
		if err != nil {
			return nil, fmt.Errorf("%s: malformed JSON: %w", d, err)
		}
		if len(raw) > MaxDocument {
			return nil, fmt.Errorf("%s is %d bytes, more than the %d MiB a document may have", d, len(raw), MaxDocument>>20)
		}
		d.raw, prev = string(data[prev:end]), end
		docs = append(docs, d)
	}
}

// writeDocuments joins the documents back.
func writeDocuments(docs []*document) []byte {
	var w bytes.Buffer
	for i, d := range docs {
		if !d.json && i > 0 && d.sep == "" {
			w.WriteString("---\n")
		}
		w.WriteString(d.sep)
		w.WriteString(d.raw)
		if !d.json && d.raw != "" && i+1 < len(docs) && !strings.HasSuffix(d.raw, "\n") {
			w.WriteString("\n")
		}
	}
	return w.Bytes()
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// lineError is an error about d, after what, with its "line N" rewritten
// as a line of the whole input; nil for none.
func lineError(d *document, what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %s%s", d, what, yamlLine.ReplaceAllStringFunc(err.Error(), func(m string) string {
		n, _ := strconv.Atoi(m[len("line "):])
		return fmt.Sprintf("line %d", d.line+n-1)
	}))
}

// forEach calls f(0) ... f(n-1), as many at once as there are CPUs, and
// returns their errors in order.
func forEach(n int, f func(i int) error) []error {
	errs := make([]error, n)
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		g.Go(func() error { errs[i] = f(i); return nil })
	}
	g.Wait()
	return errs
}
