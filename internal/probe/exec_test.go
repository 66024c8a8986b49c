package probe

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestExec(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		timeout     time.Duration
		want        string // "" when ready
	}{
		{"exits 0", `["true"]`, 5 * time.Second, ""},
		{"exits 1", "false", 5 * time.Second, "exec false: exited with code 1"},
		{"says why", `["sh","-c","echo no connection yet >&2; exit 2"]`, 5 * time.Second, "exited with code 2: no connection yet"},
		{"too slow: killed", "sleep 60", 100 * time.Millisecond, "no answer within the probe's time limit"},
		{"a child outside its group holds the output", `["sh","-c","setsid sleep 2 & exit 1"]`, 300 * time.Millisecond, "exited with code 1"},
		{"not found", "no-such-program-here", 5 * time.Second, "command not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewExec(tc.value)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			start := time.Now()
			err = p.Check(ctx)
			if took := time.Since(start); took > tc.timeout+5*time.Second {
				t.Errorf("took %s, past the check's limit %s", took, tc.timeout)
			}
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Check = %v, want %q", err, tc.want)
			}
		})
	}
}

// A command's output is kept up to a bound, whatever it writes.
func TestExecOutputBounded(t *testing.T) {
	p, _ := NewExec(`["sh","-c","head -c 1000000 /dev/zero | tr '\\0' x; exit 1"]`)
	err := p.Check(context.Background())
	if err == nil || len(err.Error()) > outputLimit+200 {
		t.Fatalf("Check = %d bytes of error, want at most about %d", len(err.Error()), outputLimit)
	}
}
