#!/bin/sh
# Builds job-signal's two images, job-signal (Dockerfile: job-signal and
# sidecar-watch, for the init container) and job-signal-webhook
# (webhook.Dockerfile), each for several platforms with a manifest list
# over them, with buildah; `make image` runs it (see README.md, "Images").
#
# IMAGE_TARGET=prebuilt (the default) works offline: the binaries are
# cross-compiled here (GOOS/GOARCH, no emulation), then each Dockerfile's
# FROM-scratch "prebuilt" target is built once per platform from them (the
# webhook's with this machine's CA certificates, for its registry lookups).
# IMAGE_TARGET=release builds each Dockerfile's default target, from source,
# on the distroless base: it needs a registry to pull the bases from.
#
# Environment (make passes each one):
#   IMAGE          job-signal's manifest list, e.g. ghcr.io/job-signal/job-signal:v0.1.0
#   WEBHOOK_IMAGE  job-signal-webhook's, e.g. ghcr.io/job-signal/job-signal-webhook:v0.1.0
#   IMAGES         which to build: "job-signal job-signal-webhook" (both), or one
#   VERSION        the version label (and build argument)
#   LDFLAGS        the Go linker flags of make build: stripped, VERSION stamped
#   REVISION       the revision label (a git commit)
#   PLATFORMS      space-separated, e.g. "linux/amd64 linux/arm64"
#   IMAGE_TARGET   prebuilt or release
#   IMAGE_ARCHIVE  if set, also write job-signal's list and its images to this
#                  OCI archive, and the webhook's to WEBHOOK_IMAGE_ARCHIVE
#   IMAGE_WORK     a scratch folder for the per-platform build contexts
#   BUILDAH        the buildah command, with global options, e.g.
#                  "buildah --storage-driver vfs --root DIR --runroot DIR"
#   BUD_FLAGS      more options for buildah bud, e.g. "--pull=never"
#   GO             the go command
set -eu

: "${IMAGE:?}" "${VERSION:?}" "${LDFLAGS:?}" "${REVISION:?}" "${PLATFORMS:?}" "${IMAGE_TARGET:?}" "${IMAGE_WORK:?}"
WEBHOOK_IMAGE=${WEBHOOK_IMAGE:-}
IMAGES=${IMAGES:-job-signal job-signal-webhook}
BUILDAH=${BUILDAH:-buildah}
BUD_FLAGS=${BUD_FLAGS:-}
GO=${GO:-go}
repo=$(cd "$(dirname "$0")/.." && pwd)
case $IMAGE_WORK in
/*) ;;
*) IMAGE_WORK=$PWD/$IMAGE_WORK ;; # the go build below runs in $repo
esac
# The CA certificates the webhook's prebuilt image carries.
ca_file=${CA_CERTIFICATES:-/etc/ssl/certs/ca-certificates.crt}

# build NAME LIST DOCKERFILE ARCHIVE PACKAGE...: one image's manifest list.
build() {
	name=$1 list=$2 dockerfile=$3 archive=$4
	shift 4
	# An older list or per-platform image of the same name would be added
	# to, not replaced: remove them first.
	$BUILDAH manifest rm "$list" >/dev/null 2>&1 || true
	$BUILDAH manifest create "$list" >/dev/null
	case $IMAGE_TARGET in
	prebuilt)
		for platform in $PLATFORMS; do
			os=${platform%%/*}
			arch=${platform#*/}
			context=$IMAGE_WORK/$name-$os-$arch
			rm -rf "$context"
			mkdir -p "$context/bin" "$context/certs"
			echo "image: $name $platform: building the binaries"
			(cd "$repo" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch $GO build -trimpath \
				-ldflags "$LDFLAGS" -o "$context/bin/" "$@")
			if [ "$name" = job-signal-webhook ]; then
				test -s "$ca_file" || { echo "image: no CA certificates at $ca_file (apt-get install ca-certificates, or set CA_CERTIFICATES)" >&2; exit 1; }
				cp "$ca_file" "$context/certs/ca-certificates.crt"
			fi
			echo "image: $name $platform: building the prebuilt target"
			$BUILDAH rmi "$list-$os-$arch" >/dev/null 2>&1 || true
			$BUILDAH bud $BUD_FLAGS --quiet --platform "$platform" --target prebuilt \
				--build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" \
				-f "$repo/$dockerfile" -t "$list-$os-$arch" "$context" >/dev/null
			$BUILDAH manifest add "$list" "containers-storage:$list-$os-$arch" >/dev/null
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
			-f "$repo/$dockerfile" --manifest "$list" "$repo"
		;;
	*)
		echo "image: IMAGE_TARGET=$IMAGE_TARGET: want prebuilt or release" >&2
		exit 2
		;;
	esac
	if [ -n "$archive" ]; then
		mkdir -p "$(dirname "$archive")"
		rm -f "$archive" # buildah does not overwrite an archive
		$BUILDAH manifest push --quiet --all "$list" "oci-archive:$archive:$list"
		echo "image: wrote $archive"
	fi
	echo "image: manifest list $list (in buildah's storage):"
	$BUILDAH manifest inspect "$list"
}

for name in $IMAGES; do
	case $name in
	job-signal)
		build job-signal "$IMAGE" Dockerfile "${IMAGE_ARCHIVE:-}" ./cmd/job-signal ./cmd/sidecar-watch
		;;
	job-signal-webhook)
		: "${WEBHOOK_IMAGE:?}"
		archive=
		if [ -n "${IMAGE_ARCHIVE:-}" ]; then
			archive=${WEBHOOK_IMAGE_ARCHIVE:?}
			if [ "$archive" = "$IMAGE_ARCHIVE" ]; then
				echo "image: WEBHOOK_IMAGE_ARCHIVE is IMAGE_ARCHIVE ($archive): name the archives apart" >&2
				exit 2
			fi
		fi
		build job-signal-webhook "$WEBHOOK_IMAGE" webhook.Dockerfile "$archive" ./cmd/job-signal-webhook
		;;
	*)
		echo "image: IMAGES=$IMAGES: want job-signal, job-signal-webhook or both" >&2
		exit 2
		;;
	esac
done
