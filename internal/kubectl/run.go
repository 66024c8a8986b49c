package kubectl

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"go.yaml.in/yaml/v3"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/version"
)

// Options are inject's choices; uninject needs none.
type Options struct {
	Offline   bool              // refuse containers whose command comes from their image
	Installer string            // image of the init container; empty: version.Image
	Resolver  *resolve.Resolver // looks images up
	Keychain  authn.Keychain
	Timeout   time.Duration // bound on all registry lookups together
	// LimitRanges nil: not checked, and Unchecked says why in a note (admit.go).
	LimitRanges          LimitRangeReader
	Namespace, Unchecked string // Namespace: of the objects that name none
	// Target: the form to write and the cluster it is for (the zero
	// value: the pair); TargetNote, when it is not known, why, said on
	// stderr when a template changes.
	Target     inject.Target
	TargetNote string
}

// pod is a Pod template found in a document, read once.
type pod struct {
	template
	plan     *inject.Plan
	platform resolve.Platform
	ops      []inject.Op
	applied  []inject.Op // ops as the editor applied them, in the document
	form     inject.Form // the form inject chose
}

// parsed is a document as kubectl reads it, with the Pod templates in it;
// root is its source tree, read only when it changes.
type parsed struct {
	doc   *document
	json  []byte // the document's meaning
	value any    // the same, decoded (numbers as json.Number)
	root  *snode
	pods  []*pod
}

// Run transforms every Pod template of the documents read from in
// (injecting, or uninjecting when opts is nil) and writes all documents to
// out, or nothing if any of them fails. Each change is an edit of the
// document's bytes where the changed field is: everything else stays as
// it was written. Notes and warnings go to stderr.
func Run(ctx context.Context, in io.Reader, out, stderr io.Writer, opts *Options) error {
	docs, err := readDocuments(in)
	if err != nil {
		return err
	}
	size := 0
	for _, d := range docs {
		size += len(d.raw)
	}
	tuneGC(size)
	type read struct {
		p     *parsed
		notes []string
		err   error
	}
	reads := make([]read, len(docs))
	forEach(len(docs), func(i int) {
		r := &reads[i]
		r.p, r.notes, r.err = parse(docs[i], opts.target())
	})
	var all []*parsed
	var errs []error
	for _, r := range reads {
		for _, n := range r.notes {
			fmt.Fprintln(stderr, "note:", n)
		}
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		if r.p != nil {
			all = append(all, r.p)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if opts != nil {
		if err := injectAll(ctx, all, opts, stderr); err != nil {
			return err
		}
	}
	type edited struct {
		doc     *document
		text    string
		changed bool
		err     error
	}
	edits := make([]edited, len(all))
	forEach(len(all), func(i int) {
		e := &edits[i]
		e.doc = all[i].doc
		e.text, e.changed, e.err = editDocument(all[i], opts != nil)
		all[i] = nil // what was read of it is garbage now: a smaller heap to collect
	})
	texts := make(map[*document]string)
	for _, e := range edits {
		if e.err != nil {
			errs = append(errs, e.err)
			continue
		}
		if e.changed {
			texts[e.doc] = e.text
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	var buf bytes.Buffer
	writeDocuments(&buf, docs, texts)
	_, err = out.Write(buf.Bytes())
	return err
}

// parseDocument reads a document into its tree: JSON with its own reader
// (strings as encoding/json decodes them), YAML with kyaml's yaml.v3.
// nil for a document with nothing but comments.
func parseDocument(d *document) (*snode, error) {
	if d.json {
		n, err := readJSON(d.raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		return n, nil
	}
	var root yaml.Node
	err := yaml.NewDecoder(strings.NewReader(d.raw)).Decode(&root)
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: malformed YAML: %s", d, absoluteLines(d, err))
	}
	if err := checkAliases(&root); err != nil {
		return nil, fmt.Errorf("%s: %w", d, err)
	}
	n, err := readYAML(d.raw, root.Content[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %s", d, absoluteLines(d, err))
	}
	return n, nil
}

// injectAll looks up the images the templates need and decides each
// template's changes.
func injectAll(ctx context.Context, all []*parsed, opts *Options, stderr io.Writer) error {
	var pods []*pod
	for _, p := range all {
		pods = append(pods, p.pods...)
	}
	images, err := lookUp(ctx, pods, opts)
	if err != nil {
		return err
	}
	type injected struct {
		res inject.Result
		err error
	}
	results := make([]injected, len(pods))
	forEach(len(pods), func(i int) {
		r, p := &results[i], pods[i]
		r.res, r.err = p.plan.Inject(imagesFor(images, p.platform), cmp.Or(opts.Installer, version.Image))
	})
	var errs []error
	a := newAdmission(ctx, opts)
	for i, p := range pods {
		res, err := results[i].res, results[i].err
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.where, err))
			continue
		}
		for _, w := range res.Warnings {
			fmt.Fprintf(stderr, "warning: %s: %s\n", p.where, w)
		}
		reportForm(stderr, p.where, opts.Target.Mode, res)
		p.ops, p.form = res.Ops, res.Form
		errs = append(errs, a.admit(p))
	}
	err = errors.Join(errs...)
	noteTarget(stderr, opts, pods, err)
	return a.done(stderr, err)
}

// applyAll edits a document's bytes with the changes of its templates.
func applyAll(p *parsed) (string, bool, error) {
	ed := newEditor(p.doc, p.root)
	changed := false
	for _, pd := range p.pods {
		if len(pd.ops) == 0 {
			continue
		}
		changed = true
		ops := inject.Prefixed(pd.prefix, pd.ops)
		ed.kept = map[string]string{}
		ed.peekKeep(ops[len(ops)-1]) // the record: it must know what it replaces
		for _, op := range ops[:len(ops)-1] {
			if err := ed.apply(op); err != nil {
				return "", false, fmt.Errorf("%s: %w", pd.where, err)
			}
		}
		last := inject.KeepText(ops, ed.kept)[len(ops)-1]
		last.Keep = "" // noted already
		if err := ed.apply(last); err != nil {
			return "", false, fmt.Errorf("%s: %w", pd.where, err)
		}
		pd.applied = append(ops[:len(ops)-1:len(ops)-1], last)
	}
	if !changed {
		return "", false, nil
	}
	text, err := ed.finish()
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", p.doc, err)
	}
	return text, true, nil
}

type imageKey struct {
	platform resolve.Platform
	image    string
}

func imagesFor(all map[imageKey]inject.ImageConfig, platform resolve.Platform) map[string]inject.ImageConfig {
	out := map[string]inject.ImageConfig{}
	for k, v := range all {
		if k.platform == platform {
			out[k.image] = v
		}
	}
	return out
}

// lookUp finds the ENTRYPOINT, CMD and STOPSIGNAL of every image some
// template needs, each image once, concurrently, within opts.Timeout.
func lookUp(ctx context.Context, pods []*pod, opts *Options) (map[imageKey]inject.ImageConfig, error) {
	type lookup struct {
		cfg inject.ImageConfig
		err error
	}
	lookups := map[imageKey]*lookup{}
	var errs []error
	var wg sync.WaitGroup
	ctx, cancel := resolve.Timeout(ctx, opts.Timeout)
	defer cancel()
	for _, p := range pods {
		for _, n := range p.plan.Needs() {
			if opts.Offline {
				errs = append(errs, fmt.Errorf("%s: container %q has no command, so its image's ENTRYPOINT is needed, and --offline forbids looking up %s: give the container a command", p.where, n.Container, n.Image))
				continue
			}
			key := imageKey{p.platform, n.Image}
			if lookups[key] != nil {
				continue
			}
			l := &lookup{}
			lookups[key] = l
			wg.Go(func() { l.cfg, l.err = opts.Resolver.Lookup(ctx, n.Image, opts.Keychain, key.platform) })
		}
	}
	wg.Wait()
	images := map[imageKey]inject.ImageConfig{}
	for _, p := range pods {
		for _, n := range p.plan.Needs() {
			if l := lookups[imageKey{p.platform, n.Image}]; l != nil && l.err != nil {
				errs = append(errs, fmt.Errorf("%s: container %q has no command, and its image's ENTRYPOINT could not be looked up (or use --offline and give it a command): %s", p.where, n.Container, inject.OneLine(l.err.Error(), inject.MaxReason)))
			} else if l != nil {
				images[imageKey{p.platform, n.Image}] = l.cfg
			}
		}
	}
	return images, errors.Join(errs...)
}
