package inject

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestDecodedAsJSON: PrepareDecoded and UninjectDecoded, given the
// template decoded, decide what Prepare and Uninject decide from its
// JSON, errors included: on every injectable shape, the same shape
// injected, and templates they refuse.
func TestDecodedAsJSON(t *testing.T) {
	deep := `{"spec":{"containers":[{"name":"a","image":"b","x":` + strings.Repeat("[", 99) + strings.Repeat("]", 99) + `}]}}`
	inputs := [][]byte{
		[]byte(deep),
		[]byte(`{"spec":{"containers":[{"name":"a","image":"b","Command":["x"]}]}}`),
		[]byte(`{"metadata":{"annotations":{"job-signal.dev/injected":"{not json"}},"spec":{"containers":[{"name":"a","image":"b"}]}}`),
		[]byte(`{"metadata":{"annotations":{"n":1}},"spec":{"containers":[]}}`),
		[]byte(`{"spec":null}`),
	}
	images := map[string]map[string]ImageConfig{}
	for _, sh := range injectableShapes(t) {
		injected, err := Apply(sh.data, sh.ops)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, sh.data, injected)
		images[string(sh.data)], images[string(injected)] = sh.images, sh.images
	}
	for i, data := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			want, wantErr := Uninject(data)
			got, err := UninjectDecoded(decodeDoc(t, data))
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s:\nUninjectDecoded %v (%v)\nUninject        %v (%v)", data, got, err, want, wantErr)
			}
			plan, wantErr := Prepare(data)
			decoded, err := PrepareDecoded(decodeDoc(t, data))
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%s:\nPrepareDecoded %v\nPrepare        %v", data, err, wantErr)
			}
			if err != nil {
				return
			}
			w, wantErr := plan.Inject(images[string(data)], "ghcr.io/job-signal/job-signal:v1")
			g, err := decoded.Inject(images[string(data)], "ghcr.io/job-signal/job-signal:v1")
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(g, w) || decoded.Nothing() != plan.Nothing() {
				gj, _ := json.Marshal(g.Ops)
				wj, _ := json.Marshal(w.Ops)
				t.Fatalf("%s:\nfrom decoded %s (%v)\nfrom JSON    %s (%v)", data, gj, err, wj, wantErr)
			}
		})
	}
}
