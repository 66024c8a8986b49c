package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// readTemplate decodes the spec from the bytes it was given where that
// gives what decoding the spec written again gives: the same template,
// or the same error, for every shape and for inputs where it must not.
func TestReadTemplateSpecAsWritten(t *testing.T) {
	var inputs [][]byte
	for _, sh := range injectableShapes(t) {
		inputs = append(inputs, sh.data)
		injected, err := Apply(sh.data, sh.ops)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, injected)
	}
	for _, s := range []string{
		` { "spec" : {"containers":[{"name":"a","image":"x","command":["/a"]}]} , "metadata":{"annotations":{"a":"b"}} } `,
		`{"spec":{"containers":[{"name":"a","image":"x"}]},"spec":{"containers":[{"name":"b","image":"y"}]}}`,
		`{"spec":{"securityContext":{"runAsUser":1},"securityContext":{"fsGroup":2},"containers":[]}}`,
		`{"spec":{"nodeSelector":{"a":"1","a":"2"},"containers":[]}}`,
		`{"sp\u0065c":{"containers":[{"name":"escaped key"}]}}`,
		`{"spec":{"containers":[{"name":"a","Command":["/a"]},{"name":"b","ARGS":[]}],"newField":1}}`,
		`{"spec":{"containers":[{"name":"a","ports":[{"containerPort":1.0}]}]}}`,
		`{"spec":{"containers":[{"name":"a \"quoted\" ]}","image":"x\u00e9\ud83d\ude00"}],"terminationGracePeriodSeconds":30}}`,
		`{"spec":{"containers":[{"name":"\xff"}]}}`,
		`{"spec":null}`,
		`{"spec":"x"}`,
		`{"spec":{}} trailing`,
		`[]`,
	} {
		inputs = append(inputs, []byte(s))
	}
	for i, data := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got, gotErr := readTemplate(data)
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var raw map[string]any
			if err := dec.Decode(&raw); err != nil {
				if gotErr == nil {
					t.Fatalf("%s: read, though it is not a JSON object", data)
				}
				return
			}
			want, wantErr := templateOf(raw, nil, false)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("%s: error %v, want %v", data, gotErr, wantErr)
			}
			if gotErr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: spec\n%+v\nwant\n%+v", data, got.spec, want.spec)
			}
		})
	}
}

func TestMemberBytes(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"spec":{"a":[1,{"b":"}"}]},"x":1}`, `{"a":[1,{"b":"}"}]}`},
		{` {"x" : "spec", "spec" : true } `, `true`},
		{`{"spec":1,"spec":[2]}`, `[2]`},
		{`{"x":"\"spec\":1"}`, ``},
		{`{"sp\u0065c":1}`, `1`}, // the key a decoder reads
		{`{"spec":1,"sp\u0065c":[2],"x":3}`, `[2]`},
		{`{"spec":{"a":[1,2}}`, ``},
		{`{}`, ``},
		{`[]`, ``},
		{`{"spec":`, ``},
	} {
		if got := string(memberBytes([]byte(tc.data), "spec")); got != tc.want {
			t.Errorf("memberBytes(%s) = %q, want %q", tc.data, got, tc.want)
		}
	}
}
