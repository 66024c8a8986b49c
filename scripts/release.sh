#!/bin/sh
# Publishes a release of job-signal from a clean checkout of its tag; `make
# release` runs it (docs/release.md is the whole sequence). It checks that
# what the README promises will be true once the tag is pushed, builds the
# two images (make image) and the plugin's binaries, each stamped with the
# release, and pushes the images. The tag is pushed last, by hand: `go
# install ...@RELEASE` then finds images that exist.
#
# Environment (make passes each one):
#   RELEASE            internal/version.Release, e.g. v0.1.0
#   IMAGE              job-signal's reference, e.g. ghcr.io/job-signal/job-signal:v0.1.0
#   WEBHOOK_IMAGE      job-signal-webhook's
#   RELEASE_PLATFORMS  the plugin's platforms, e.g. "linux/amd64 darwin/arm64"
#   RELEASE_PUSH       yes, or no to build and check only
#   PUSH_FLAGS         more options for buildah manifest push
#   BUILDAH, GO, MAKE  the commands
set -eu

: "${RELEASE:?}" "${IMAGE:?}" "${WEBHOOK_IMAGE:?}" "${RELEASE_PLATFORMS:?}"
RELEASE_PUSH=${RELEASE_PUSH:-yes}
PUSH_FLAGS=${PUSH_FLAGS:-}
BUILDAH=${BUILDAH:-buildah}
GO=${GO:-go}
MAKE=${MAKE:-make}
cd "$(dirname "$0")/.."

fail() {
	echo "make release: $*" >&2
	exit 1
}

# What is released is the tag, as it is: the version every binary reports
# (make's VERSION, git describe) is then the release itself.
tag=$(git describe --tags --exact-match HEAD 2>/dev/null) ||
	fail "HEAD is not tagged: tag the release commit with git tag -a $RELEASE (docs/release.md)"
[ "$tag" = "$RELEASE" ] ||
	fail "HEAD is tagged $tag, but internal/version.Release is $RELEASE: set Release, or tag $RELEASE"
[ -z "$(git status --porcelain)" ] ||
	fail "the checkout has changes: release a clean checkout of $RELEASE"
case $IMAGE in
*:"$RELEASE") ;;
*) fail "IMAGE $IMAGE is not tagged $RELEASE" ;;
esac
case $WEBHOOK_IMAGE in
*:"$RELEASE") ;;
*) fail "WEBHOOK_IMAGE $WEBHOOK_IMAGE is not tagged $RELEASE" ;;
esac

# make install gives programs that report the version stamped; make
# release refuses what it must (internal/version/release_test.go).
$GO test -tags release -count=1 ./internal/version/

out=dist/release
rm -rf "$out"
mkdir -p "$out"

# The images, as make image builds them (VERSION is the tag).
$MAKE image IMAGE="$IMAGE" WEBHOOK_IMAGE="$WEBHOOK_IMAGE" VERSION="$RELEASE" \
	IMAGE_ARCHIVE="$out/job-signal-$RELEASE.oci.tar" WEBHOOK_IMAGE_ARCHIVE="$out/job-signal-webhook-$RELEASE.oci.tar"

# The plugin for each platform, with make build's flags.
ldflags="-s -w -X github.com/job-signal/job-signal/internal/version.Stamped=$RELEASE"
for platform in $RELEASE_PLATFORMS; do
	os=${platform%%/*}
	arch=${platform#*/}
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch $GO build -trimpath -ldflags "$ldflags" \
		-o "$out/kubectl-job_signal-$RELEASE-$os-$arch" ./cmd/kubectl-job_signal
done

# The plugin built for this machine must say it is the release.
here="$out/kubectl-job_signal-$RELEASE-$($GO env GOOS)-$($GO env GOARCH)"
if [ -x "$here" ]; then
	said=$("$here" version)
	[ "$said" = "kubectl-job_signal $RELEASE" ] || fail "$here version says \"$said\", not kubectl-job_signal $RELEASE"
fi
(cd "$out" && sha256sum -- * >SHA256SUMS)

if [ "$RELEASE_PUSH" != yes ]; then
	echo "make release: built in $out, not pushed (RELEASE_PUSH=$RELEASE_PUSH)"
	exit 0
fi
# shellcheck disable=SC2086 # PUSH_FLAGS: several options
$BUILDAH manifest push --all $PUSH_FLAGS "$IMAGE" "docker://$IMAGE"
# shellcheck disable=SC2086
$BUILDAH manifest push --all $PUSH_FLAGS "$WEBHOOK_IMAGE" "docker://$WEBHOOK_IMAGE"

cat <<EOF
make release: $IMAGE and $WEBHOOK_IMAGE pushed; the plugin's binaries and SHA256SUMS are in $out.
What remains, in this order (docs/release.md):
  git push origin $RELEASE          # go install github.com/job-signal/job-signal/cmd/kubectl-job_signal@$RELEASE works from then on
  a GitHub release of $RELEASE with the files of $out
EOF
