package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/inject/jsonscan"
)

// decodedReview is an AdmissionReview as the webhook reads it: the review's
// apiVersion and kind, its request, and for a Pod the object decoded once
// (inject.Parse), without its managedFields.
type decodedReview struct {
	admissionv1.AdmissionReview
	pod map[string]any // nil: not decoded yet
}

// decodeReview reads body as encoding/json decodes it into an
// AdmissionReview, and the Pod in it once. The review's own members are
// each decoded by encoding/json, but its object is only located (with
// the product's JSON reader), never decoded into the review: the
// decoding of a review spent most of its time scanning the Pod twice
// more, its managedFields included. Whatever the reader does not take as
// it is (a member spelled in other case, a key twice, a scan that fails)
// goes to encoding/json whole, as before, whose answer and error stand.
func decodeReview(body []byte) (decodedReview, error) {
	if r, ok := scanReview(body); ok {
		return r, nil
	}
	var r decodedReview
	err := json.Unmarshal(body, &r.AdmissionReview)
	if err == nil && r.Request != nil && r.Request.Kind.Kind == "Pod" {
		r.Request.Object.Raw = withoutManagedFields(r.Request.Object.Raw)
	}
	return r, err
}

// reviewMembers and requestMembers are the members encoding/json decodes
// into an AdmissionReview and its request (their JSON names).
var (
	reviewMembers  = []string{"apiVersion", "kind", "request", "response"}
	requestMembers = []string{"uid", "kind", "resource", "subResource", "requestKind", "requestResource",
		"requestSubResource", "name", "namespace", "operation", "userInfo", "object", "oldObject", "dryRun", "options"}
)

// scanReview is decodeReview's fast way, for a review of the plain shape
// the API server sends; ok is false for any other.
func scanReview(body []byte) (r decodedReview, ok bool) {
	s := jsonscan.New(bytes.NewReader(body), 4<<10)
	var object []byte
	cutAlready := false // object is without its managedFields already
	requests, objects := 0, 0
	// member decodes the value at the scanner into v with encoding/json,
	// or (v nil) checks that it is JSON.
	member := func(v any) error {
		s.Peek()
		from := s.Offset()
		s.Skip()
		if s.Err() != nil {
			return s.Err()
		}
		span := body[from:s.Offset()]
		if v == nil {
			if !json.Valid(span) {
				return jsonscan.ErrJSON
			}
			return nil
		}
		return json.Unmarshal(span, v)
	}
	err := s.Object(func(key string) error {
		switch spelled(key, reviewMembers) {
		case other:
			return member(nil)
		case folded:
			return errOther
		}
		switch key {
		case "request":
			if requests++; requests > 1 || s.Peek() != '{' {
				return errOther
			}
			r.Request = &admissionv1.AdmissionRequest{}
			seen := map[string]bool{}
			return s.Object(func(key string) error {
				switch spelled(key, requestMembers) {
				case other:
					return member(nil)
				case folded:
					return errOther
				}
				if seen[key] {
					return errOther
				}
				seen[key] = true
				q := r.Request
				switch key {
				case "object":
					objects++
					s.Peek()
					from := s.Offset()
					if q.Kind.Kind == "Pod" && s.Peek() == '{' { // the API server sends kind first
						cutFrom, cutTo := managedFields(s)
						if s.Err() == nil && cutFrom >= 0 {
							object = cut(body[from:s.Offset()], cutFrom-from, cutTo-from)
							cutAlready = true
							return nil
						}
					} else {
						s.Skip()
					}
					object, cutAlready = body[from:s.Offset()], false
					return s.Err()
				case "uid":
					return member(&q.UID)
				case "kind":
					return member(&q.Kind)
				case "resource":
					return member(&q.Resource)
				case "subResource":
					return member(&q.SubResource)
				case "requestKind":
					return member(&q.RequestKind)
				case "requestResource":
					return member(&q.RequestResource)
				case "requestSubResource":
					return member(&q.RequestSubResource)
				case "name":
					return member(&q.Name)
				case "namespace":
					return member(&q.Namespace)
				case "operation":
					return member(&q.Operation)
				case "userInfo":
					return member(&q.UserInfo)
				case "oldObject":
					return member(&q.OldObject)
				case "dryRun":
					return member(&q.DryRun)
				default: // options
					return member(&q.Options)
				}
			})
		case "apiVersion":
			return member(&r.APIVersion)
		case "kind":
			return member(&r.Kind)
		default: // response
			return member(&r.Response)
		}
	})
	if err != nil || r.Request == nil || objects != 1 || len(bytes.TrimSpace(body[s.Offset():])) > 0 {
		return decodedReview{}, false
	}
	if bytes.Equal(object, []byte("null")) {
		return r, true // as encoding/json leaves a RawExtension
	}
	if r.Request.Kind.Kind != "Pod" {
		if !json.Valid(object) {
			return decodedReview{}, false
		}
		r.Request.Object.Raw = object
		return r, true
	}
	if !cutAlready {
		object = withoutManagedFields(object)
	}
	r.Request.Object.Raw = object
	if r.pod, err = inject.Parse(r.Request.Object.Raw); err != nil {
		return decodedReview{}, false
	}
	return r, true
}

// errOther stops scanReview at what it leaves to encoding/json.
var errOther = errors.New("not the plain shape of a review")

// spelling is how a key names a member: exactly, only as encoding/json's
// folding of case would take it, or not at all.
type spelling int

const (
	other spelling = iota
	exact
	folded
)

func spelled(key string, members []string) spelling {
	if slices.Contains(members, key) {
		return exact
	}
	for _, m := range members {
		if strings.EqualFold(key, m) {
			return folded
		}
	}
	return other
}
