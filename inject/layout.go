package inject

// The layout decided for the project (docs/layout.md): names and paths that the
// manifests, the kustomize component, the CLI and the webhook share.
const (
	StateVolume   = "job-signal"
	StateDir      = "/var/run/job-signal" // job-signal's and sidecar-watch's default --dir
	BinVolume     = "job-signal-bin"
	BinDir        = "/var/run/job-signal-bin"
	InitContainer = "job-signal-install"

	JobSignalPath    = BinDir + "/job-signal"
	SidecarWatchPath = BinDir + "/sidecar-watch"

	// installerPath is where the image keeps job-signal.
	installerPath = "/usr/local/bin/job-signal"
	nonRootID     = 65532
)
