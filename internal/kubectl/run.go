package kubectl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/version"
)

// Options are inject's choices; uninject needs none.
type Options struct {
	Offline              bool              // refuse containers whose command comes from their image
	Installer            string            // image of the init container; empty: version.Image
	Resolver             *resolve.Resolver // looks images up
	Keychain             authn.Keychain
	Timeout              time.Duration    // bound on all registry lookups together
	LimitRanges          LimitRangeReader // nil: not checked, Unchecked says why
	Namespace, Unchecked string           // Namespace: of the objects that name none
	Target               inject.Target    // the form and the cluster (zero: the pair)
	TargetNote           string           // why the cluster is not known, for stderr
}

// pod is a Pod template found in a document, read once.
type pod struct {
	template
	plan     *inject.Plan
	platform resolve.Platform
	ops      []inject.Op
	applied  []inject.Op // ops as the editor applied them, in the document
	raw      []byte      // the template as JSON, while it is checked (admit.go)
	before   corev1.Pod  // and as the API server reads it
	form     inject.Form // the form inject chose
}

// parsed is a document as kubectl reads it, with the Pod templates in it.
type parsed struct {
	doc   *document
	value any // the document's meaning (numbers as json.Number)
	pods  []*pod
}

// Run transforms every Pod template of the documents read from in
// (injecting, or uninjecting when opts is nil) and writes all documents to
// out, or nothing if any of them fails. Each change is an edit of the
// document's bytes where the changed field is: everything else stays as
// it was written. Notes and warnings go to stderr, once each, when the
// output is written (said).
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
	var target *inject.Target // what parse decides the templates for: nil to uninject
	if opts != nil {
		t := opts.Target
		t.Mode = cmp.Or(t.Mode, inject.ModePair)
		target = &t
	}
	all := make([]*parsed, len(docs))
	notes := make([][]string, len(docs))
	errs := forEach(len(docs), func(i int) (err error) {
		all[i], notes[i], err = parse(docs[i], target)
		return err
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	say := said{seen: map[string]bool{}}
	for _, n := range slices.Concat(notes...) {
		fmt.Fprintln(&say, "note:", n)
	}
	all = slices.DeleteFunc(all, func(p *parsed) bool { return p == nil })
	if len(all) == 0 && len(say.lines) == 0 {
		what := "uninject"
		if opts != nil {
			what = "inject"
		}
		fmt.Fprintf(&say, "note: the input holds no Job, CronJob or Pod (nor a List of them): nothing to %s, written out as it is\n", what)
	}
	if opts != nil {
		if err := injectAll(ctx, all, opts, &say); err != nil {
			return err
		}
	}
	errs = forEach(len(all), func(i int) error {
		d := all[i].doc
		text, changed, err := editDocument(all[i], opts != nil)
		all[i] = nil // what was read of it is garbage now: a smaller heap to collect
		if changed {
			d.raw = text
		}
		return err
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if _, err = out.Write(writeDocuments(docs)); err != nil {
		return err
	}
	say.writeTo(stderr)
	return nil
}

// parseDocument reads a document into its tree; nil for a document with
// nothing but comments.
func parseDocument(d *document) (*node, error) {
	if d.json {
		n, _, err := readJSON(d.raw)
		return n, lineError(d, "", err)
	}
	var root yaml.Node
	err := yaml.NewDecoder(strings.NewReader(d.raw)).Decode(&root)
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, lineError(d, "malformed YAML: ", err)
	}
	n, err := readYAML(d.raw, root.Content[0])
	return n, lineError(d, "", err)
}

// injectAll looks up the images the templates need and decides each
// template's changes.
func injectAll(ctx context.Context, all []*parsed, opts *Options, stderr io.Writer) error {
	var pods []*pod
	for _, p := range all {
		pods = append(pods, p.pods...)
	}
	found, err := lookUp(ctx, pods, opts)
	if err != nil {
		return err
	}
	results := make([]inject.Result, len(pods))
	errs := forEach(len(pods), func(i int) (err error) {
		p := pods[i]
		if results[i], err = p.plan.Inject(found[p.platform], cmp.Or(opts.Installer, version.Image)); err == nil && len(results[i].Ops) > 0 {
			err = p.readTyped(opts.LimitRanges != nil)
		}
		return err
	})
	ranges := map[string][]corev1.LimitRange{} // read, by namespace
	installs := false                          // some template gets the install container (native sidecars do not)
	for i, p := range pods {
		if errs[i] != nil {
			errs[i] = fmt.Errorf("%s: %w", p.where, errs[i])
			continue
		}
		for _, w := range results[i].Warnings {
			fmt.Fprintf(stderr, "warning: %s: %s\n", p.where, w)
		}
		p.ops, p.form = results[i].Ops, results[i].Form
		// Which form and why, unless the user asked for the pair, or every
		// form is the pair for one reason (TargetNote, said once below).
		if mode := opts.Target.Mode; opts.TargetNote == "" && mode != "" && mode != inject.ModePair && len(p.ops) > 0 && results[i].Reason != "" {
			fmt.Fprintf(stderr, "note: %s: %s\n", p.where, results[i].Reason)
		}
		installs = installs || len(p.ops) > 0 && p.form != inject.FormNative
		if err := admit(ctx, p, opts, ranges); err != nil {
			errs[i] = fmt.Errorf("%s: %w", p.where, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err // and nothing said: Run writes stderr's notes only with the output
	}
	if opts.TargetNote != "" && slices.ContainsFunc(pods, func(p *pod) bool { return len(p.ops) > 0 }) {
		fmt.Fprintln(stderr, "note:", opts.TargetNote)
	}
	if installs && opts.LimitRanges == nil && opts.Unchecked != "" {
		fmt.Fprintf(stderr, "note: LimitRanges not checked (%s): where one has a min, a max or a maxLimitRequestRatio that the %s init container's resources do not meet, the API server refuses these Pods\n",
			opts.Unchecked, inject.InitContainer)
	}
	return nil
}

// applyAll writes the changes of a document's templates into its bytes.
// Its callers pass only a document with changes: one without is left as
// read, never parsed by the editor (which refuses some layouts it need
// not touch).
func applyAll(p *parsed) (string, error) {
	root, err := parseDocument(p.doc)
	if err != nil {
		return "", err
	}
	ed := newEditor(p.doc, root)
	for _, pd := range p.pods {
		if len(pd.ops) == 0 {
			continue
		}
		ops := inject.Prefixed(pd.prefix, pd.ops)
		ed.kept = map[string]string{}
		ed.peekKeep(ops[len(ops)-1]) // the record: it must know what it replaces
		for i := range ops {
			if i == len(ops)-1 { // the record, with the texts the others replaced
				ops[i] = inject.KeepText(ops, ed.kept)[i]
				ops[i].Keep = "" // noted already
			}
			if err := ed.apply(ops[i]); err != nil {
				return "", fmt.Errorf("%s: %w", pd.where, err)
			}
		}
		pd.applied = ops
	}
	return ed.finish(), nil
}

// lookUp finds the ENTRYPOINT, CMD and STOPSIGNAL of every image some
// template needs, by platform, then by image: each image once,
// concurrently, within opts.Timeout; offline, only what the known-sidecar
// table holds of it.
func lookUp(ctx context.Context, pods []*pod, opts *Options) (map[resolve.Platform]map[string]inject.ImageConfig, error) {
	type lookup struct {
		cfg inject.ImageConfig
		err error
	}
	type key struct {
		platform resolve.Platform
		image    string
	}
	lookups := map[key]*lookup{}
	var wg sync.WaitGroup
	ctx, cancel := resolve.Timeout(ctx, opts.Timeout)
	defer cancel()
	for _, p := range pods {
		for _, n := range p.plan.Needs() {
			if k := (key{p.platform, n.Image}); !opts.Offline && lookups[k] == nil {
				l := &lookup{}
				lookups[k] = l
				wg.Go(func() { l.cfg, l.err = opts.Resolver.Lookup(ctx, n.Image, opts.Keychain, k.platform) })
			}
		}
	}
	wg.Wait()
	found := map[resolve.Platform]map[string]inject.ImageConfig{}
	var errs []error
	for _, p := range pods {
		for _, n := range p.plan.Needs() {
			l, known := lookups[key{p.platform, n.Image}], true
			if opts.Offline {
				l = &lookup{}
				l.cfg, known = inject.KnownImage(n)
			}
			switch {
			case !known: // saying so when native sidecars, which keep every command, would serve the Pod
				err := fmt.Errorf("%s: container %q has no command, so its image's ENTRYPOINT is needed, and --offline forbids looking up %q: give the container a command", p.where, n.Container, n.Image)
				if p.plan.NativeWouldServe() {
					err = fmt.Errorf("%w; or, for a cluster with native sidecars (1.29 or later: --kube-version, or --mode native), native sidecars would serve this Pod and need no ENTRYPOINT", err)
				}
				errs = append(errs, err)
			case l.err != nil:
				errs = append(errs, fmt.Errorf("%s: container %q has no command, and its image's ENTRYPOINT could not be looked up (or use --offline and give it a command): %s", p.where, n.Container, inject.OneLine(l.err.Error(), inject.MaxReason)))
			case found[p.platform] == nil:
				found[p.platform] = map[string]inject.ImageConfig{n.Image: l.cfg}
			default:
				found[p.platform][n.Image] = l.cfg
			}
		}
	}
	return found, errors.Join(errs...)
}
