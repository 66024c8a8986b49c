package kubectl

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

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
}

// pod is a Pod template decoded for the transformation.
type pod struct {
	template
	spec        corev1.PodSpec
	annotations map[string]string
	platform    resolve.Platform
}

// Run transforms every Pod template of the documents read from in
// (injecting, or uninjecting when opts is nil) and writes all documents to
// out, or nothing if any of them fails. Notes and warnings go to stderr.
func Run(ctx context.Context, in io.Reader, out, stderr io.Writer, opts *Options) error {
	docs, err := readDocuments(in)
	if err != nil {
		return err
	}
	roots := make([]*yaml.Node, len(docs))
	var pods []*pod
	var errs []error
	for i, d := range docs {
		root, err := parseDocument(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if root == nil {
			continue
		}
		if err := checkAliases(root); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d, err))
			continue
		}
		expandAliases(root)
		roots[i] = root
		templates, notes, err := findTemplates(d, root.Content[0], "", "")
		for _, n := range notes {
			fmt.Fprintln(stderr, "note:", n)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, t := range templates {
			p, err := decode(t)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			pods = append(pods, p)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	var images map[imageKey]inject.ImageConfig
	if opts != nil {
		if images, err = lookUp(ctx, pods, opts); err != nil {
			return err
		}
	}
	changed := map[*document]bool{}
	for _, p := range pods {
		var res inject.Result
		if opts != nil {
			res, err = inject.Inject(inject.Input{Spec: p.spec, Annotations: p.annotations, Images: imagesFor(images, p.platform), Installer: cmp.Or(opts.Installer, version.Image)})
		} else {
			res, err = inject.Uninject(p.spec, p.annotations)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.where, err))
			continue
		}
		for _, w := range res.Warnings {
			fmt.Fprintf(stderr, "warning: %s: %s\n", p.where, w)
		}
		if apply(p, res) {
			changed[p.doc] = true
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		if changed[d] {
			if texts[i], err = encode(d, roots[i]); err != nil {
				return fmt.Errorf("%s: %w", d, err)
			}
		}
	}
	var buf bytes.Buffer
	writeDocuments(&buf, docs, texts)
	_, err = out.Write(buf.Bytes())
	return err
}

// parseDocument parses d with kyaml's YAML (JSON is YAML too); nil for a
// document with nothing but comments.
func parseDocument(d *document) (*yaml.Node, error) {
	var root yaml.Node
	err := yaml.NewDecoder(strings.NewReader(d.raw)).Decode(&root)
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: malformed YAML: %s", d, absoluteLines(d, err))
	}
	return &root, nil
}

// decode reads a template's spec and annotations into Kubernetes' types.
func decode(t template) (*pod, error) {
	v, err := toValue(t.specNode, "spec")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.where, err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: spec: %w", t.where, err)
	}
	p := &pod{template: t}
	if err := json.Unmarshal(raw, &p.spec); err != nil {
		return nil, fmt.Errorf("%s: spec is not a valid PodSpec: %w", t.where, err)
	}
	if ann := mapValue(mapValue(t.obj, "metadata"), "annotations"); ann != nil {
		v, err := toValue(ann, "metadata.annotations")
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			return nil, fmt.Errorf("%s: metadata.annotations must map names to strings", t.where)
		}
		p.annotations = map[string]string{}
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s: metadata.annotations.%s must be a string: quote it", t.where, k)
			}
			p.annotations[k] = s
		}
	}
	p.platform = resolve.Platform{OS: "linux", Architecture: p.spec.NodeSelector[corev1.LabelArchStable]}
	return p, nil
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

// lookUp finds the ENTRYPOINT and CMD of every image some template needs,
// each image once, concurrently, within opts.Timeout.
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
	needs := map[*pod][]inject.Need{}
	for _, p := range pods {
		list, err := inject.Needs(p.spec, p.annotations)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.where, err))
			continue
		}
		needs[p] = list
		for _, n := range list {
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
		for _, n := range needs[p] {
			if l := lookups[imageKey{p.platform, n.Image}]; l != nil && l.err != nil {
				errs = append(errs, fmt.Errorf("%s: container %q has no command, and its image's ENTRYPOINT could not be looked up (or use --offline and give it a command): %w", p.where, n.Container, l.err))
			} else if l != nil {
				images[imageKey{p.platform, n.Image}] = l.cfg
			}
		}
	}
	return images, errors.Join(errs...)
}

// apply writes the result into the template's nodes; false if nothing
// changed.
func apply(p *pod, res inject.Result) bool {
	before, _ := json.Marshal(p.spec)
	after, _ := json.Marshal(res.Spec)
	sameAnnotations := maps.Equal(p.annotations, res.Annotations)
	if bytes.Equal(before, after) && sameAnnotations {
		return false
	}
	old, _ := decodeOrdered(before)
	new, _ := decodeOrdered(after)
	if !reflect.DeepEqual(old, new) {
		syncNode(p.specNode, old, new)
	}
	if !sameAnnotations {
		setAnnotations(p.obj, p.annotations, res.Annotations)
	}
	return true
}
