package kubectl

import "testing"

func TestGCPercent(t *testing.T) {
	for _, tc := range []struct {
		size int
		env  string
		want int
	}{
		{0, "", 400},
		{smallInput, "", 400},
		{smallInput + 1, "", 0},
		{100, "100", 0},
		{100, "off", 0},
		{smallInput + 1, "800", 0},
	} {
		if got := gcPercent(tc.size, tc.env); got != tc.want {
			t.Errorf("gcPercent(%d, %q) = %d, want %d", tc.size, tc.env, got, tc.want)
		}
	}
}
