package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
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
	pod inject.Parsed // Object nil: not decoded yet
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

// requestMembers are the members encoding/json decodes into an
// AdmissionRequest (their JSON names), each with where it goes; the
// object is located instead (nil).
func requestMembers(q *admissionv1.AdmissionRequest) map[string]any {
	return map[string]any{"uid": &q.UID, "kind": &q.Kind, "resource": &q.Resource, "subResource": &q.SubResource,
		"requestKind": &q.RequestKind, "requestResource": &q.RequestResource, "requestSubResource": &q.RequestSubResource,
		"name": &q.Name, "namespace": &q.Namespace, "operation": &q.Operation, "userInfo": &q.UserInfo,
		"object": nil, "oldObject": &q.OldObject, "dryRun": &q.DryRun, "options": &q.Options}
}

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
	// The review's members, each with where it goes; the request is read
	// member by member instead (nil).
	reviewMembers := map[string]any{"apiVersion": &r.APIVersion, "kind": &r.Kind, "request": nil, "response": &r.Response}
	err := s.Object(func(key string) error {
		switch spelled(key, reviewMembers) {
		case other:
			return member(nil)
		case folded:
			return errOther
		}
		if key != "request" {
			return member(reviewMembers[key])
		}
		if requests++; requests > 1 || s.Peek() != '{' {
			return errOther
		}
		r.Request = &admissionv1.AdmissionRequest{}
		members := requestMembers(r.Request)
		seen := map[string]bool{}
		return s.Object(func(key string) error {
			switch spelled(key, members) {
			case other:
				return member(nil)
			case folded:
				return errOther
			}
			if seen[key] {
				return errOther
			}
			seen[key] = true
			if key != "object" {
				return member(members[key])
			}
			objects++
			s.Peek()
			from := s.Offset()
			if r.Request.Kind.Kind == "Pod" && s.Peek() == '{' { // the API server sends kind first
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
		})
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

func spelled(key string, members map[string]any) spelling {
	if _, ok := members[key]; ok {
		return exact
	}
	for m := range members {
		if strings.EqualFold(key, m) {
			return folded
		}
	}
	return other
}
