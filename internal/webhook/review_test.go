package webhook_test

import (
	"encoding/json"
	"reflect"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// sameAsDecoding fails t unless decodeReview reads body as encoding/json
// decodes it into an AdmissionReview (a Pod's managedFields cut, as the
// webhook has always cut them): the same review, or an error when and
// only when encoding/json gives one; and a Pod decoded beside it, when it
// is, is inject.Parse of its object.
func sameAsDecoding(t *testing.T, body []byte) {
	t.Helper()
	var want admissionv1.AdmissionReview
	wantErr := json.Unmarshal(body, &want)
	if wantErr == nil && want.Request != nil && want.Request.Kind.Kind == "Pod" {
		want.Request.Object.Raw = webhook.WithoutManagedFields(want.Request.Object.Raw)
	}
	got, pod, err := webhook.DecodeReview(body)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: error %v, encoding/json's %v", body, err, wantErr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nread     %+v\ndecoded  %+v", body, got.Request, want.Request)
	}
	if pod != nil {
		parsed, err := inject.Parse(got.Request.Object.Raw)
		if err != nil || !reflect.DeepEqual(pod, parsed.Object) {
			t.Fatalf("%s: the Pod read beside the review is not its object's (%v)", body, err)
		}
	}
}

// TestDecodeReview: the reviews the API server sends are read the fast
// way, and every review, of that shape or not, as encoding/json decodes
// it.
func TestDecodeReview(t *testing.T) {
	for _, pod := range [][]byte{webhooktest.ReviewOf(t, webhooktest.APIServerPod()), webhooktest.ReviewOf(t, webhooktest.APIServerAppJobPod())} {
		if !webhook.ScannedFast(pod) {
			t.Fatalf("the API server's review of a Pod is not read the fast way: %.200s", pod)
		}
		sameAsDecoding(t, pod)
	}
	for _, body := range []string{
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","object":{"metadata":{"name":"a","managedFields":[{"x":1}]},"spec":{}}}}`,
		`{"request":{"uid":"u","kind":{"group":"batch","version":"v1","kind":"Job"},"operation":"CREATE","object":{"spec":{"template":{}}},"dryRun":true,"options":{"kind":"CreateOptions"}}}`,
		`{"request":{"UID":"u","kind":{"kind":"Pod"},"object":{}}}`,                    // another case: encoding/json takes it
		`{"Request":{"uid":"u","kind":{"kind":"Pod"},"object":{}}}`,                    // the same, one level up
		`{"request":{"uid":"u","uid":"v","kind":{"kind":"Pod"},"object":{}}}`,          // twice: the last
		`{"request":{"uid":"u","object":{}},"request":{"name":"n","object":{}}}`,       // twice: merged
		`{"request":{"uid":"u","kind":{"kind":"Pod"},"object":null}}`,                  // no object
		`{"request":{"uid":"u","kind":{"kind":"Pod"}}}`,                                // none at all
		`{"request":{"uid":"u","kind":{"kind":"Pod"},"object":{"spec":{"a":}}}}`,       // not JSON inside
		`{"request":{"uid":"u","kind":{"kind":"Job"},"object":{"spec":{"a":}}}}`,       // the same, not a Pod
		`{"request":{"uid":"u","userInfo":{"username":1},"object":{}}}`,                // a member of the wrong type
		`{"request":{"uid":"u","object":{}},"response":5}`,                             // the same, beside the request
		`{"request":{"uid":"u","object":{}},"extra":[1,}`,                              // an unknown member, not JSON
		`{"request":{"uid":"u","object":{}},"extra":{"x":[1,{"y":null}]}}`,             // an unknown member
		`{"request":{"uid":"\u0075\ud83d\ude00","object":{}}}`,                         // escapes
		`{"request":{"uid":"u","object":{}}} x`,                                        // something after it
		`{"request":null}`, `{"request":[]}`, `null`, `[]`, `{}`, ``, `{"request":{}}`, // no request
		`{"request":{"uid":"u","kind":{"kind":"Pod"},"object":[]}}`,
		// The small members' shapes the reader sets itself, and those
		// it leaves to encoding/json.
		`{"request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod","kind":"Job"},"object":{}}}`, // a key twice in kind
		`{"request":{"uid":"u","kind":{"Kind":"Pod"},"object":{}}}`,                                        // another case
		`{"request":{"uid":"u","kind":{"kind":"Pod","x":"y"},"object":{}}}`,                                // an unknown key
		`{"request":{"uid":"u","kind":{"kind":"P\u006fd"},"object":{}}}`,                                   // an escape
		`{"request":{"uid":"u","kind":{"kind":"Pöd"},"object":{}}}`,                                        // not ASCII
		`{"request":{"uid":"u","kind":{"kind":null},"object":{}}}`,                                         // null, kept
		`{"request":{"uid":"u","kind":{"kind":"Pod",},"object":{}}}`,                                       // not JSON
		`{"request":{"uid":"u","kind":{"kind":"Pod"},"kind":{"group":"g"},"object":{}}}`,                   // kind twice: merged
		`{"request":{"uid":"u","kind":null,"object":{}}}`,
		`{"request":{"uid":"u","kind":{ "kind" : "Pod" , "version":"v1" } ,"object":{}}}`,
		`{"request":{"uid":"u","kind":{},"requestKind":{"kind":"Pod"},"requestResource":{"resource":"pods","group":""},"object":{}}}`,
		`{"request":{"uid":"u","requestKind":null,"requestResource":null,"object":{}}}`,
		`{"request":{"uid":"u","requestKind":{"kind":"Pod","kind2":"x"},"object":{}}}`,
		`{"request":{"uid":"u","requestKind":[],"object":{}}}`,
		`{"request":{"uid":"u","requestResource":"pods","object":{}}}`,
		`{"request":{"uid":"u","dryRun":false,"object":{}}}`, `{"request":{"uid":"u","dryRun":null,"object":{}}}`,
		`{"request":{"uid":"u","dryRun":"true","object":{}}}`, `{"request":{"uid":"u","dryRun":tru,"object":{}}}`,
		`{"request":{"uid":"u","options":null,"oldObject":{"a":[1]},"object":{}}}`,
		`{"request":{"uid":"u","options":{"a":01},"object":{}}}`, // not JSON
		`{"request":{"uid":"u\n","name":"a\"b","namespace":"\t","operation":"CREATE","object":{}}}`,
		`{"request":{"uid":"u","name":"a	b","object":{}}}`, // a control character
		`{"request":{"uid":null,"name":null,"operation":5,"object":{}}}`,
		`{"apiVersion":"v\u0031","kind":"Admission\u0052eview","request":{"uid":"u","object":{}}}`,
		`{"request":{"uid":"u","kind":{"kind":"Pod"},"object":"x"}}`,
	} {
		sameAsDecoding(t, []byte(body))
	}
}

// FuzzDecodeReview: whatever the body, decodeReview reads it as
// encoding/json decodes it.
func FuzzDecodeReview(f *testing.F) {
	f.Add(webhooktest.ReviewOf(f, webhooktest.APIServerPod()))
	f.Add([]byte(`{"request":{"uid":"u","kind":{"kind":"Pod"},"object":{"metadata":{"managedFields":[]}},"userInfo":{"groups":["a"]}}}`))
	f.Add([]byte(`{"request":{"uid":"u","kind":{"kind":"Job"},"object":{}},"extra":[1]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		sameAsDecoding(t, body)
	})
}
