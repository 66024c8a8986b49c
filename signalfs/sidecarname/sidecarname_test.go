package sidecarname

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestValid(t *testing.T) {
	for _, good := range []string{"a", "proxy", "cloud-sql-proxy", "a1", "1a", "0", strings.Repeat("a", 63)} {
		if err := Valid(good); err != nil {
			t.Errorf("Valid(%q) = %v, want nil", good, err)
		}
	}
	for _, bad := range []string{"", "-a", "a-", "A", "a_b", "a.b", "a/b", "..", "a b", "ä", strings.Repeat("a", 64)} {
		if err := Valid(bad); err == nil {
			t.Errorf("Valid(%q) = nil, want an error", bad)
		}
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList([]string{"a,b", " c ", "a", ""})
	if err != nil || strings.Join(got, " ") != "a b c" {
		t.Errorf("got %v, %v", got, err)
	}
	var many []string
	for i := 0; i < 30; i++ {
		many = append(many, fmt.Sprintf("sidecar-number-%02d-with-a-long-descriptive-name", i))
	}
	for _, bad := range [][]string{{"a,,b"}, {"a,"}, {"a,B"}, many} {
		if _, err := ParseList(bad); err == nil {
			t.Errorf("ParseList(%q): want an error", bad)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{"proxy", "-", "a-b", "A", strings.Repeat("z", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		want := dnsLabel.MatchString(name) && len(name) <= MaxLen
		if got := Valid(name) == nil; got != want {
			t.Fatalf("Valid(%q) ok=%v, want %v", name, got, want)
		}
	})
}
