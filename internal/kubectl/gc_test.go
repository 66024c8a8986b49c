package kubectl

import "testing"

func TestGCLimit(t *testing.T) {
	for _, tc := range []struct {
		size        int
		gogc, limit string
		want        int64
	}{
		{0, "", "", smallLimit},
		{smallInput, "", "", smallLimit},
		{smallInput + 1, "", "", 0},
		{100, "100", "", 0},
		{100, "off", "", 0},
		{100, "", "1GiB", 0},
		{smallInput + 1, "800", "", 0},
	} {
		if got := gcLimit(tc.size, tc.gogc, tc.limit); got != tc.want {
			t.Errorf("gcLimit(%d, %q, %q) = %d, want %d", tc.size, tc.gogc, tc.limit, got, tc.want)
		}
	}
}
