package signalfs

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestValidName(t *testing.T) {
	for _, good := range []string{"a", "proxy", "cloud-sql-proxy", "a1", "1a", "0", strings.Repeat("a", 63)} {
		if err := ValidName(good); err != nil {
			t.Errorf("ValidName(%q) = %v, want nil", good, err)
		}
	}
	for _, bad := range []string{"", "-a", "a-", "A", "a_b", "a.b", "a/b", "..", "a b", "ä", strings.Repeat("a", 64)} {
		if err := ValidName(bad); err == nil {
			t.Errorf("ValidName(%q) = nil, want an error", bad)
		}
	}
}

func TestParseNames(t *testing.T) {
	got, err := ParseNames([]string{"a,b", " c ", "a", ""})
	if err != nil || strings.Join(got, " ") != "a b c" {
		t.Errorf("got %v, %v", got, err)
	}
	var many []string
	for i := 0; i < 30; i++ {
		many = append(many, fmt.Sprintf("sidecar-number-%02d-with-a-long-descriptive-name", i))
	}
	for _, bad := range [][]string{{"a,,b"}, {"a,"}, {"a,B"}, many} {
		if _, err := ParseNames(bad); err == nil {
			t.Errorf("ParseNames(%q): want an error", bad)
		}
	}
}

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"proxy", "-", "a-b", "A", strings.Repeat("z", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		want := dnsLabel.MatchString(name) && len(name) <= MaxNameLen
		if got := ValidName(name) == nil; got != want {
			t.Fatalf("ValidName(%q) ok=%v, want %v", name, got, want)
		}
	})
}
