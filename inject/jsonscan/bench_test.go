package jsonscan_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/job-signal/job-signal/inject/jsonscan"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
)

// BenchmarkDecode is the decoding of an application's Job Pod as the
// webhook decodes it (as the API server sends it, without managedFields):
// by Decode, and by encoding/json's Decoder with UseNumber (std), the
// reference.
func BenchmarkDecode(b *testing.B) {
	pod := webhooktest.APIServerAppJobPod()
	pod.ManagedFields = nil
	data, err := json.Marshal(pod)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, ok := jsonscan.Decode(data, 100); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("std", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
