package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"go install at a tag", debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, "v0.1.0"},
		{"pseudo-version names its revision", debug.BuildInfo{
			Main:     debug.Module{Version: "v0.1.1-0.20261122100000-0123456789ab"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}},
		}, "v0.1.1-0.20261122100000-0123456789ab"},
		{"build in a checkout", debug.BuildInfo{
			Main:     debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}},
		}, "(devel) 0123456789ab-dirty"},
		{"nothing known", debug.BuildInfo{}, "(devel)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromBuildInfo(&tc.info); got != tc.want {
				t.Errorf("fromBuildInfo = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestImageIsTheRelease(t *testing.T) {
	if !strings.HasSuffix(Image, ":"+Release) || !strings.HasPrefix(Release, "v") {
		t.Fatalf("Image %q does not carry Release %q", Image, Release)
	}
}
