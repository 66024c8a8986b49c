package webhook

import (
	"testing"
	"time"
)

// TestWarnDue: a warning when the certificate is within 30 days of its
// expiry: at once for a certificate not warned about yet, then once a day.
func TestWarnDue(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		left       time.Duration
		same       bool
		lastWarned time.Duration // ago
		want       bool
	}{
		{"a year left", 365 * 24 * time.Hour, false, 0, false},
		{"31 days left", 31 * 24 * time.Hour, false, 0, false},
		{"30 days left", 30 * 24 * time.Hour, false, 0, true},
		{"an hour left, never warned", time.Hour, false, 0, true},
		{"warned an hour ago", 29 * 24 * time.Hour, true, time.Hour, false},
		{"warned a day ago", 29 * 24 * time.Hour, true, 24 * time.Hour, true},
		{"another certificate, warned about the last an hour ago", 29 * 24 * time.Hour, false, time.Hour, true},
		{"expired", -time.Hour, true, 25 * time.Hour, true},
	} {
		if got := warnDue(now.Add(tc.left), now, tc.same, now.Add(-tc.lastWarned)); got != tc.want {
			t.Errorf("%s: warn %v, want %v", tc.name, got, tc.want)
		}
	}
}
