package resolve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// The classes of a lookup's result, for metrics and for deciding what to
// do about a failure: a bounded set, never free text.
const (
	ResultCached   = "cached"   // answered from the cache (after the access check)
	ResultFetched  = "fetched"  // read from the registry
	ClassTimeout   = "timeout"  // no answer within the lookup's deadline
	ClassNetwork   = "network"  // the registry could not be reached, or hung up
	ClassServer    = "server"   // the registry said it is unavailable: 429, 5xx
	ClassBusy      = "busy"     // other lookups held the memory budget of registry reads
	ClassDenied    = "denied"   // 401, 403: credentials missing or refused
	ClassNotFound  = "notfound" // 404, or a host that does not exist
	ClassTooLarge  = "toolarge" // an answer over a bound
	ClassMalformed = "invalid"  // anything else: a bad reference or manifest, a digest that does not match, ...
)

// Class names the kind of failure err is (a Lookup's or Resolve's error).
// Of several, the first transient one counts: that is the one worth
// waiting for.
func Class(err error) string {
	if err == nil {
		return ResultFetched
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		for _, e := range j.Unwrap() {
			if c := Class(e); transientClass(c) {
				return c
			}
		}
		return Class(j.Unwrap()[0])
	}
	var bound *BoundError
	var terr *transport.Error
	var dns *net.DNSError
	var netErr net.Error
	switch {
	case errors.As(err, &bound):
		return ClassTooLarge
	case errors.Is(err, ErrBusy):
		return ClassBusy
	case errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.As(err, &terr):
		switch {
		case terr.StatusCode == http.StatusUnauthorized || terr.StatusCode == http.StatusForbidden:
			return ClassDenied
		case terr.StatusCode == http.StatusNotFound:
			return ClassNotFound
		case terr.StatusCode == http.StatusTooManyRequests || terr.StatusCode >= 500:
			return ClassServer
		}
		return ClassMalformed
	case errors.As(err, &dns) && dns.IsNotFound:
		return ClassNotFound
	case errors.As(err, &netErr) && netErr.Timeout():
		return ClassTimeout
	case errors.As(err, &netErr), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.Canceled):
		return ClassNetwork
	}
	return ClassMalformed
}

// Transient reports whether a lookup that failed with err may well
// succeed if tried again soon: the registry did not answer in time, could
// not be reached, or said it is unavailable. A registry that refuses the
// credentials, does not know the image, breaks a bound or sends content
// that does not match its digest says the same next time.
func Transient(err error) bool { return err != nil && transientClass(Class(err)) }

func transientClass(c string) bool {
	return c == ClassTimeout || c == ClassNetwork || c == ClassServer || c == ClassBusy
}
