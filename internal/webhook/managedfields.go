package webhook

import (
	"bytes"
	"errors"

	"github.com/job-signal/job-signal/inject/jsonscan"
)

// withoutManagedFields is a Pod's JSON without metadata.managedFields,
// the API server's record of which client set which field: as large as
// the rest of a Pod's metadata and spec together, a tree of small
// objects, and read by nothing of the webhook's. The JSON Patch the
// webhook answers with names the places it changes by path (spec,
// metadata.annotations), never managedFields, so it applies to the Pod as
// sent just as to the Pod without them.
//
// The Pod is read with the product's one JSON reader (inject/jsonscan). Only the
// member "managedFields" of the member "metadata" is cut, each there
// once: raw is returned as it is when it is not an object of that shape,
// has none, or has either key twice (which one a reader keeps is its own
// rule).
func withoutManagedFields(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`"managedFields"`)) { // not spelled plainly: left, and quickly
		return raw
	}
	s := jsonscan.New(bytes.NewReader(raw), 4<<10)
	from, to := managedFields(s)
	if s.Err() != nil || from < 0 {
		return raw
	}
	return cut(raw, from, to)
}

// managedFields reads the object at s and says where its member
// metadata.managedFields is, with the comma it takes along, in s's
// offsets (-1, -1: it has none). The scanner stops (errTwice) when either
// key comes twice, or metadata is not an object.
func managedFields(s *jsonscan.Scanner) (from, to int) {
	at := s.Offset
	var metadatas, fields int
	from, to = -1, -1
	s.Object(func(key string) error {
		if key != "metadata" {
			s.Skip()
			return s.Err()
		}
		if metadatas++; metadatas > 1 || s.Peek() != '{' {
			return errTwice
		}
		prev := at() + 1 // the end of the member before, or metadata's '{'
		first := true
		return s.Object(func(key string) error {
			s.Skip()
			if key == "managedFields" {
				if fields++; fields > 1 {
					return errTwice
				}
				// Cut the member and the comma before it, or the one
				// after it when it is the first (alone, it leaves {}).
				from, to = prev, at()
				if first && s.Peek() == ',' {
					to = at() + 1
				}
			}
			prev, first = at(), false
			return s.Err()
		})
	})
	return from, to
}

// cut is raw without its bytes from from to to, in a new slice.
func cut(raw []byte, from, to int) []byte {
	out := make([]byte, 0, len(raw)-(to-from))
	return append(append(out, raw[:from]...), raw[to:]...)
}

// errTwice stops the walk of a Pod withoutManagedFields leaves as it is.
var errTwice = errors.New("metadata or managedFields twice, or metadata not an object")
