// Package version is the one place that says which release this tree is,
// which image holds its binaries, and what version a binary reports.
package version

import (
	"runtime/debug"
	"strings"
)

// Release is the version this tree releases as. The image tag in the
// README, manifests/, the kustomize component and the inject defaults is
// this version; a test checks that they all agree.
const Release = "v0.1.0"

// Repository is the image repository the release is published to.
const Repository = "ghcr.io/job-signal/job-signal"

// Image is the released image holding job-signal and sidecar-watch.
const Image = Repository + ":" + Release

// WebhookImage is the released image of job-signal-webhook.
const WebhookImage = Repository + "-webhook:" + Release

// Stamped is set at build time (make, the Dockerfile) with
//
//	-ldflags "-X github.com/job-signal/job-signal/internal/version.Stamped=v1.2.3"
//
// It is empty in a plain go build or go install, where String falls back
// to the module version and VCS revision Go records in the binary.
var Stamped string

// String is the version a binary reports: the stamped one, or else what
// runtime/debug.ReadBuildInfo knows (the module version for go install
// pkg@version, "(devel)" plus the VCS revision for a build in a checkout).
func String() string {
	if Stamped != "" {
		return Stamped
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return fromBuildInfo(info)
}

func fromBuildInfo(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	// A pseudo-version (v0.0.0-2026...-abcdef123456) already names the
	// revision; a tagged or devel build gets it appended.
	if short := revision[:min(12, len(revision))]; short != "" && !strings.Contains(v, short) {
		v += " " + short
		if modified == "true" {
			v += "-dirty"
		}
	}
	return v
}
