// Package registry runs distribution's reference registry for tests:
// built from the module proxy (the module in distribution/), started on
// 127.0.0.1 and stopped by PID (Start), with images written by
// go-containerregistry (Image, Push). e2e/ uses it for the webhook's
// lookups through a real API server.
//
// Its own tests (build tag e2e, part of make e2e) run inject's lookups, the
// plugin and the webhook's handler against it; plus the handler's latency
// with cached and uncached lookups.
package registry
