#!/bin/sh
# Builds job-signal's image for several platforms and a manifest list over
# them, with buildah; `make image` runs it (see README.md, "Images").
#
# IMAGE_TARGET=prebuilt (the default) works offline: the binaries are
# cross-compiled here (GOOS/GOARCH, no emulation), then the Dockerfile's
# FROM-scratch "prebuilt" target is built once per platform from them.
# IMAGE_TARGET=release builds the Dockerfile's default target, from source,
# on the distroless base: it needs a registry to pull the bases from.
#
# Environment (make passes each one):
#   IMAGE          the manifest list's name, e.g. ghcr.io/job-signal/job-signal:v0.1.0
#   VERSION        the version label (and build argument)
#   LDFLAGS        the Go linker flags of make build: stripped, VERSION stamped
#   REVISION       the revision label (a git commit)
#   PLATFORMS      space-separated, e.g. "linux/amd64 linux/arm64"
#   IMAGE_TARGET   prebuilt or release
#   IMAGE_ARCHIVE  if set, also write the list and its images to this OCI archive
#   IMAGE_WORK     a scratch folder for the per-platform build contexts
#   BUILDAH        the buildah command, with global options, e.g.
#                  "buildah --storage-driver vfs --root DIR --runroot DIR"
#   BUD_FLAGS      more options for buildah bud, e.g. "--pull=never"
#   GO             the go command
set -eu

: "${IMAGE:?}" "${VERSION:?}" "${LDFLAGS:?}" "${REVISION:?}" "${PLATFORMS:?}" "${IMAGE_TARGET:?}" "${IMAGE_WORK:?}"
BUILDAH=${BUILDAH:-buildah}
BUD_FLAGS=${BUD_FLAGS:-}
GO=${GO:-go}
repo=$(cd "$(dirname "$0")/.." && pwd)
case $IMAGE_WORK in
/*) ;;
*) IMAGE_WORK=$PWD/$IMAGE_WORK ;; # the go build below runs in $repo
esac

# An older list or per-platform image of the same name would be added to,
# not replaced: remove them first.
$BUILDAH manifest rm "$IMAGE" >/dev/null 2>&1 || true
$BUILDAH manifest create "$IMAGE" >/dev/null

case $IMAGE_TARGET in
prebuilt)
	for platform in $PLATFORMS; do
		os=${platform%%/*}
		arch=${platform#*/}
		context=$IMAGE_WORK/$os-$arch
		rm -rf "$context"
		mkdir -p "$context/bin"
		echo "image: $platform: building the binaries"
		(cd "$repo" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch $GO build -trimpath \
			-ldflags "$LDFLAGS" \
			-o "$context/bin/" ./cmd/job-signal ./cmd/sidecar-watch)
		echo "image: $platform: building the prebuilt target"
		$BUILDAH rmi "$IMAGE-$os-$arch" >/dev/null 2>&1 || true
		$BUILDAH bud $BUD_FLAGS --quiet --platform "$platform" --target prebuilt \
			--build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" \
			-f "$repo/Dockerfile" -t "$IMAGE-$os-$arch" "$context" >/dev/null
		$BUILDAH manifest add "$IMAGE" "containers-storage:$IMAGE-$os-$arch" >/dev/null
	done
	;;
release)
	# buildah builds each platform and adds it to the list. Debian's
	# buildah 1.28 does not define BUILDPLATFORM itself (it does define
	# TARGETOS and TARGETARCH): without it the Go stage would run on the
	# target platform, emulated, or not at all.
	build_platform=$($GO env GOHOSTOS)/$($GO env GOHOSTARCH)
	$BUILDAH bud $BUD_FLAGS --platform "$(echo $PLATFORMS | tr ' ' ,)" --target release \
		--build-arg "BUILDPLATFORM=$build_platform" \
		--build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" \
		-f "$repo/Dockerfile" --manifest "$IMAGE" "$repo"
	;;
*)
	echo "image: IMAGE_TARGET=$IMAGE_TARGET: want prebuilt or release" >&2
	exit 2
	;;
esac

if [ -n "${IMAGE_ARCHIVE:-}" ]; then
	mkdir -p "$(dirname "$IMAGE_ARCHIVE")"
	rm -f "$IMAGE_ARCHIVE" # buildah does not overwrite an archive
	$BUILDAH manifest push --quiet --all "$IMAGE" "oci-archive:$IMAGE_ARCHIVE:$IMAGE"
	echo "image: wrote $IMAGE_ARCHIVE"
fi
echo "image: manifest list $IMAGE (in buildah's storage):"
$BUILDAH manifest inspect "$IMAGE"
