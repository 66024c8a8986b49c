package main

import (
	"testing"
	"time"
)

// TestProfileSplit: each sample of `go tool pprof -traces` goes to the
// first part whose functions its stack has, GC before all, the rest last.
func TestProfileSplit(t *testing.T) {
	traces := []byte(`File: profiled
Duration: 7.38s, Total samples = 2.77s (37.54%)
-----------+-------------------------------------------------------
      10ms   crypto/internal/fips140/bigmod.addMulVVW1024
             crypto/tls.(*Conn).serverHandshake
             net/http.(*conn).serve
-----------+-------------------------------------------------------
      20ms   encoding/json.Unmarshal
             github.com/job-signal/job-signal/inject.PrepareParsedFor
             github.com/job-signal/job-signal/internal/webhook.(*Config).mutate
             github.com/job-signal/job-signal/internal/webhook.(*Config).serveMutate
-----------+-------------------------------------------------------
      30ms   runtime.scanobject
             runtime.gcAssistAlloc
             github.com/job-signal/job-signal/inject.PrepareFor
-----------+-------------------------------------------------------
     1.2s   runtime.futex
             runtime.notesleep
-----------+-------------------------------------------------------
`)
	parts, total := profileSplit(traces)
	if total != 1260*time.Millisecond {
		t.Errorf("total %s", total)
	}
	want := map[string]time.Duration{"TLS handshakes": 10 * time.Millisecond, "inject reading the Pod (inject.PrepareParsedFor: the PodSpec, strictly)": 20 * time.Millisecond,
		"garbage collection": 30 * time.Millisecond, "the rest (the runtime, client-go's watch of LimitRanges)": 1200 * time.Millisecond}
	if len(parts) != len(want) {
		t.Errorf("parts %v", parts)
	}
	for _, p := range parts {
		if want[p.name] != p.samples {
			t.Errorf("%s: %s, want %s", p.name, p.samples, want[p.name])
		}
	}
	if parts[0].samples != 1200*time.Millisecond {
		t.Errorf("not largest first: %v", parts)
	}
}
