// Package resolve looks up the ENTRYPOINT and CMD of container images in
// their registries (the OCI distribution API, through go-containerregistry),
// for the containers an inject.Plan needs.
//
// Every read from a registry is bounded (bounds.go): manifests and indexes
// at the size registries themselves accept, config blobs at a few MiB,
// error text at a few KiB, sizes announced over the bound refused before
// anything is read, content checked against its digest, and all lookups
// together hold at most readBudget bytes. A registry that breaks a bound
// fails the lookup of its image, nothing else.
//
// Answers are cached by repository and digest, but a Pod only gets what
// its own credentials could fetch (as the kubelet checks the credentials
// of every Pod for an image already on the node): every lookup first asks
// the registry for the manifest's digest (a HEAD request) with the
// caller's credentials, for a tag and for a digest alike, and the cache
// answers only after that succeeded.
package resolve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/semaphore"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/version"
)

// Resolver looks images up. The zero value is not usable: use New.
type Resolver struct {
	transport http.RoundTripper

	// The cache: "repository@digest platform" to its answer.
	mu      sync.Mutex
	size    int
	entries map[string]inject.ImageConfig
	hits    int

	// OnLookup, when set, hears of every Lookup: its result (ResultCached,
	// ResultFetched or a failure's Class) and how long it took. Set it
	// before the first lookup.
	OnLookup func(result string, elapsed time.Duration)
}

// maxLookups bounds the lookups one Resolve runs at once.
const maxLookups = 8

// New returns a Resolver whose cache holds up to size answers. transport
// nil means http.DefaultTransport.
func New(transport http.RoundTripper, size int) *Resolver {
	if transport == nil {
		transport = http.DefaultTransport
	}
	bounded := &boundedTransport{next: transport, budget: semaphore.NewWeighted(readBudget)}
	return &Resolver{transport: bounded, size: max(size, 1), entries: map[string]inject.ImageConfig{}}
}

// Platform selects which image of a multi-platform index counts. The zero
// value means every linux image of the index, which must then agree.
type Platform struct{ OS, Architecture string }

func (p Platform) String() string {
	if p.Architecture == "" {
		return "any linux platform"
	}
	return p.OS + "/" + p.Architecture
}

// Resolve looks up the image of every need, concurrently, and returns the
// configs by image reference. Errors name each container and its image.
func (r *Resolver) Resolve(ctx context.Context, needs []inject.Need, keychain authn.Keychain, platform Platform) (map[string]inject.ImageConfig, error) {
	type answer struct {
		cfg inject.ImageConfig
		err error
	}
	images := map[string]*answer{}
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxLookups)
	for _, n := range needs {
		if images[n.Image] != nil {
			continue
		}
		a := &answer{}
		images[n.Image] = a
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			a.cfg, a.err = r.Lookup(ctx, n.Image, keychain, platform)
		})
	}
	wg.Wait()
	out := map[string]inject.ImageConfig{}
	var errs []error
	for _, n := range needs {
		a := images[n.Image]
		if a.err != nil {
			errs = append(errs, fmt.Errorf("container %q has no command, and its image's ENTRYPOINT could not be looked up: %w", n.Container, a.err))
			continue
		}
		out[n.Image] = a.cfg
	}
	return out, errors.Join(errs...)
}

// Lookup returns what image runs when the Pod gives no command.
func (r *Resolver) Lookup(ctx context.Context, image string, keychain authn.Keychain, platform Platform) (inject.ImageConfig, error) {
	start := time.Now()
	cfg, cached, err := r.lookup(ctx, image, keychain, platform)
	if r.OnLookup != nil {
		result := Class(err)
		if err == nil && cached {
			result = ResultCached
		}
		r.OnLookup(result, time.Since(start))
	}
	return cfg, err
}

func (r *Resolver) lookup(ctx context.Context, image string, keychain authn.Keychain, platform Platform) (inject.ImageConfig, bool, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return inject.ImageConfig{}, false, fmt.Errorf("image %q: %w", image, err)
	}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(keychain),
		remote.WithTransport(r.transport),
		remote.WithUserAgent("job-signal-inject/" + version.Release),
		// One quick second try: a registry that stays unavailable is
		// reported at once, and the caller decides when to try again.
		remote.WithRetryBackoff(remote.Backoff{Duration: 100 * time.Millisecond, Factor: 1, Steps: 2}),
	}
	// The access check: the manifest's digest, asked with these
	// credentials, for a digest reference too, before the cache may
	// answer. A tag is resolved by it.
	desc, err := remote.Head(ref, opts...)
	if err != nil {
		return inject.ImageConfig{}, false, fmt.Errorf("image %s: %w%s", image, err, hint(err))
	}
	if desc.Size > MaxManifest {
		return inject.ImageConfig{}, false, fmt.Errorf("image %s: %w", image, &BoundError{What: "manifest", Limit: MaxManifest, Announced: desc.Size})
	}
	digest := desc.Digest.String()
	if d, ok := ref.(name.Digest); ok && d.DigestStr() != digest {
		return inject.ImageConfig{}, false, fmt.Errorf("image %s: the registry answered for digest %s", image, digest)
	}
	key := ref.Context().Name() + "@" + digest + " " + platform.String()
	if cfg, ok := r.cached(key); ok {
		return cfg, true, nil
	}
	cfg, err := fetch(ref.Context().Digest(digest), platform, opts)
	if err != nil {
		return inject.ImageConfig{}, false, fmt.Errorf("image %s: %w%s", image, err, hint(err))
	}
	r.remember(key, cfg)
	return cfg, false, nil
}

// fetch reads the config of the image at ref, or of the images of the
// index at ref that match platform, which must all say the same.
func fetch(ref name.Digest, platform Platform, opts []remote.Option) (inject.ImageConfig, error) {
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return inject.ImageConfig{}, err
	}
	if !desc.MediaType.IsIndex() {
		img, err := desc.Image()
		if err != nil {
			return inject.ImageConfig{}, err
		}
		return configOf(img)
	}
	index, err := desc.ImageIndex()
	if err != nil {
		return inject.ImageConfig{}, err
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		return inject.ImageConfig{}, err
	}
	var found []string
	var first *inject.ImageConfig
	for _, m := range manifest.Manifests {
		if !matches(m.Platform, platform) {
			continue
		}
		if m.Size > MaxManifest {
			return inject.ImageConfig{}, fmt.Errorf("platform %s: %w", m.Platform, &BoundError{What: "manifest", Limit: MaxManifest, Announced: m.Size})
		}
		img, err := index.Image(m.Digest)
		if err != nil {
			return inject.ImageConfig{}, fmt.Errorf("platform %s: %w", m.Platform, err)
		}
		cfg, err := configOf(img)
		if err != nil {
			return inject.ImageConfig{}, fmt.Errorf("platform %s: %w", m.Platform, err)
		}
		found = append(found, fmt.Sprintf("%s: ENTRYPOINT %q CMD %q", m.Platform, cfg.Entrypoint, cfg.Cmd))
		if first == nil {
			first = &cfg
		} else if !slices.Equal(first.Entrypoint, cfg.Entrypoint) || !slices.Equal(first.Cmd, cfg.Cmd) {
			return inject.ImageConfig{}, fmt.Errorf("its platforms run different commands (%s): pin the Pod to one with nodeSelector kubernetes.io/arch, or give the container a command", strings.Join(found, "; "))
		}
	}
	if first == nil {
		return inject.ImageConfig{}, fmt.Errorf("the index has no image for %s", platform)
	}
	return *first, nil
}

// hint says what to do about a refusal by the registry.
func hint(err error) string {
	var terr *transport.Error
	if errors.As(err, &terr) && (terr.StatusCode == http.StatusUnauthorized || terr.StatusCode == http.StatusForbidden) {
		return " (credentials: docker login for the plugin, the Pod's imagePullSecrets for the webhook)"
	}
	return ""
}

func matches(p *v1.Platform, want Platform) bool {
	if p == nil || p.OS != "linux" {
		return false // attestations are "unknown/unknown"
	}
	return want.Architecture == "" || p.Architecture == want.Architecture
}

func configOf(img v1.Image) (inject.ImageConfig, error) {
	manifest, err := img.Manifest()
	if err != nil {
		return inject.ImageConfig{}, fmt.Errorf("read image manifest: %w", err)
	}
	if manifest.Config.Size > MaxConfig {
		return inject.ImageConfig{}, &BoundError{What: "config blob", Limit: MaxConfig, Announced: manifest.Config.Size}
	}
	file, err := img.ConfigFile()
	if err != nil {
		return inject.ImageConfig{}, fmt.Errorf("read image config: %w", err)
	}
	return inject.ImageConfig{Entrypoint: file.Config.Entrypoint, Cmd: file.Config.Cmd, StopSignal: file.Config.StopSignal}, nil
}

// cached is the answer for key, if the cache holds it.
func (r *Resolver) cached(key string) (inject.ImageConfig, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cfg, ok := r.entries[key]
	if ok {
		r.hits++
	}
	return cfg, ok
}

// remember puts an answer in the cache; when full, it forgets an
// arbitrary entry (a digest's answer never changes, so any is safe).
func (r *Resolver) remember(key string, cfg inject.ImageConfig) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.entries {
		if len(r.entries) < r.size {
			break
		}
		delete(r.entries, k)
	}
	r.entries[key] = cfg
}

// Hits is how many lookups the cache answered, for tests and logs.
func (r *Resolver) Hits() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits
}

// Timeout bounds ctx by d (0: no bound of its own).
func Timeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
