// Package registrye2e holds the registry tests of make e2e (build tag e2e):
// distribution's reference registry, built from the module proxy (the
// module in registry/) and started on 127.0.0.1, images pushed with
// go-containerregistry, and inject's lookups, the plugin and the webhook
// run against it; plus the webhook's admission latency with cached and
// uncached lookups.
package registrye2e
