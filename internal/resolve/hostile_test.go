package resolve_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/testing/hostileregistry"
)

// TestHostileRegistry: every trick of a hostile registry fails the lookup
// of its image with an error of the right class, within the lookup's
// deadline, after the client read at most about one bound's worth (the
// registry counts what it wrote; loopback socket buffers hold a few MiB
// more), while an honest image on the same registry is looked up.
func TestHostileRegistry(t *testing.T) {
	reg := hostileregistry.Start(t)
	r := resolve.New(nil, 16)
	const timeout = 3 * time.Second
	lookup := func(image string) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		start := time.Now()
		cfg, err := r.Lookup(ctx, image, authn.DefaultKeychain, resolve.Platform{OS: "linux", Architecture: "amd64"})
		if err == nil && (len(cfg.Entrypoint) != 1 || cfg.Entrypoint[0] != "/app") {
			t.Errorf("%s: ENTRYPOINT %q", image, cfg.Entrypoint)
		}
		return time.Since(start), err
	}
	if _, err := lookup(reg.Image(hostileregistry.Honest)); err != nil {
		t.Fatalf("the honest image: %v", err)
	}
	for _, tc := range []struct {
		trick hostileregistry.Trick
		class string
		says  string
	}{
		{hostileregistry.EndlessManifest, resolve.ClassTooLarge, "more than 4 MiB for a manifest"},
		{hostileregistry.EndlessError, resolve.ClassNotFound, "404"},
		{hostileregistry.HugeErrorText, resolve.ClassNotFound, "404"},
		{hostileregistry.HugeConfig, resolve.ClassTooLarge, "config blob of 8589934592 bytes"},
		{hostileregistry.LongConfig, resolve.ClassMalformed, ""},
		{hostileregistry.WrongManifestDigest, resolve.ClassMalformed, "digest"},
		{hostileregistry.WrongConfigDigest, resolve.ClassMalformed, ""},
		{hostileregistry.SlowDrip, resolve.ClassTimeout, ""},
		{hostileregistry.HugeIndexChild, resolve.ClassTooLarge, "manifest of 1073741824 bytes"},
		{hostileregistry.Unavailable, resolve.ClassServer, "503"},
	} {
		t.Run(string(tc.trick), func(t *testing.T) {
			took, err := lookup(reg.Image(tc.trick))
			if err == nil {
				t.Fatal("looked up")
			}
			if got := resolve.Class(err); got != tc.class {
				t.Errorf("class %s, want %s: %v", got, tc.class, err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
			if resolve.Transient(err) != (tc.class == resolve.ClassTimeout || tc.class == resolve.ClassServer) {
				t.Errorf("Transient = %v for class %s", resolve.Transient(err), tc.class)
			}
			if took > timeout+2*time.Second {
				t.Errorf("failed after %s, deadline %s", took, timeout)
			}
			if len(err.Error()) > 8<<10 {
				t.Errorf("error of %d bytes: an error body was read whole", len(err.Error()))
			}
			if !reg.Idle(10 * time.Second) {
				t.Fatal("the registry still writes 10 s after the lookup ended: the client did not hang up")
			}
			if sent := reg.Sent(tc.trick); sent > resolve.MaxManifest+16<<20 {
				t.Errorf("the registry wrote %d MiB: the client read past the bound", sent>>20)
			}
			t.Logf("%s after %s, %d KiB written: %v", resolve.Class(err), took.Round(time.Millisecond), reg.Sent(tc.trick)>>10, truncate(err.Error()))
		})
	}
}

// TestReadBudget: many lookups that each read up to the bound at once
// share the memory budget of registry reads without waiting for each
// other forever: each ends with its own error (the bound, or the budget
// taken by the others), none by its deadline.
func TestReadBudget(t *testing.T) {
	reg := hostileregistry.Start(t)
	r := resolve.New(nil, 16)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	errs := make(chan error, 12)
	for range cap(errs) {
		go func() {
			_, err := r.Lookup(ctx, reg.Image(hostileregistry.EndlessManifest), authn.DefaultKeychain, resolve.Platform{OS: "linux"})
			errs <- err
		}()
	}
	for range cap(errs) {
		err := <-errs
		var bound *resolve.BoundError
		if !errors.As(err, &bound) && !errors.Is(err, resolve.ErrBusy) {
			t.Errorf("want the bound or the budget, got %v", err)
		}
	}
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
