package hostileregistry

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// fill is a block of bytes for endless bodies.
var fill = []byte(strings.Repeat("0123456789abcdef", 4096))

const (
	manifestType = "application/vnd.oci.image.manifest.v1+json"
	indexType    = "application/vnd.oci.image.index.v1+json"
	configType   = "application/vnd.oci.image.config.v1+json"
)

// honestConfig is the config of every image here: it runs /app serve.
var honestConfig = []byte(`{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/app"],"Cmd":["serve"]},"rootfs":{"type":"layers","diff_ids":[]}}`)

func manifestFor(configDigest string, configSize int64) []byte {
	return fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":%q,"config":{"mediaType":%q,"digest":%q,"size":%d},"layers":[]}`,
		manifestType, configType, configDigest, configSize)
}

// playTrick answers a manifests or blobs request for one trick.
func playTrick(w http.ResponseWriter, req *http.Request, trick Trick, kind, ref string) {
	head := req.Method == http.MethodHead
	send := func(status int, mediaType string, body []byte) {
		w.Header().Set("Content-Type", mediaType)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if status == http.StatusOK && kind == "manifests" {
			w.Header().Set("Docker-Content-Digest", digestOf(body))
		}
		w.WriteHeader(status)
		if !head {
			w.Write(body)
		}
	}
	endless := func(status int, mediaType string, drip time.Duration) {
		w.Header().Set("Content-Type", mediaType)
		w.WriteHeader(status)
		if !head {
			writeBody(w, fill, true, drip)
		}
	}
	config := honestConfig
	manifest := manifestFor(digestOf(config), int64(len(config)))
	switch {
	case head && kind == "manifests" && (trick == EndlessError || trick == HugeErrorText):
		send(http.StatusOK, manifestType, manifest)
		return
	case trick == EndlessError:
		endless(http.StatusNotFound, "application/json", 0)
		return
	case trick == HugeErrorText:
		var b strings.Builder
		for i := 0; b.Len() < 1<<20; i++ {
			fmt.Fprintf(&b, "<p>line %d of a very long\r\nerror\tpage %s</p>\n", i, strings.Repeat("x", 200))
		}
		send(http.StatusNotFound, "text/html", []byte(b.String()))
		return
	case trick == Unavailable:
		send(http.StatusServiceUnavailable, "text/plain", []byte("restarting\n"))
		return
	case trick == HugeConfig:
		manifest = manifestFor(digestOf(config), 8<<30)
	}
	switch {
	case kind == "manifests" && trick == HugeIndexChild:
		index := fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":%q,"manifests":[{"mediaType":%q,"digest":%q,"size":%d,"platform":{"architecture":"amd64","os":"linux"}}]}`,
			indexType, manifestType, digestOf(manifest), 1<<30)
		if !strings.HasPrefix(ref, "sha256:") || ref == digestOf(index) {
			send(http.StatusOK, indexType, index)
			return
		}
		endless(http.StatusOK, manifestType, 0)
	case kind == "manifests" && trick == EndlessManifest && head:
		// The tag resolves to some digest; its content never ends.
		w.Header().Set("Content-Type", manifestType)
		w.Header().Set("Content-Length", strconv.Itoa(len(manifest)))
		w.Header().Set("Docker-Content-Digest", digestOf(manifest))
	case kind == "manifests" && trick == EndlessManifest:
		endless(http.StatusOK, manifestType, 0)
	case kind == "manifests" && trick == SlowDrip:
		w.Header().Set("Content-Type", manifestType)
		w.Header().Set("Docker-Content-Digest", digestOf(manifest))
		w.Header().Set("Content-Length", strconv.Itoa(len(manifest)))
		w.WriteHeader(http.StatusOK)
		if !head {
			writeBody(w, manifest, false, 50*time.Millisecond)
		}
	case kind == "manifests" && trick == WrongManifestDigest && strings.HasPrefix(ref, "sha256:"):
		other := append(manifest, ' ') // the same manifest, one byte more: another digest
		w.Header().Set("Content-Type", manifestType)
		w.Header().Set("Docker-Content-Digest", ref)
		w.Header().Set("Content-Length", strconv.Itoa(len(other)))
		w.WriteHeader(http.StatusOK)
		if !head {
			w.Write(other)
		}
	case kind == "manifests":
		send(http.StatusOK, manifestType, manifest)
	case kind == "blobs" && trick == HugeConfig, kind == "blobs" && trick == LongConfig:
		endless(http.StatusOK, "application/octet-stream", 0)
	case kind == "blobs" && trick == WrongConfigDigest:
		bad := []byte(strings.Replace(string(config), "/app", "/bad", 1)) // same size, other digest
		send(http.StatusOK, "application/octet-stream", bad)
	case kind == "blobs":
		send(http.StatusOK, "application/octet-stream", config)
	default:
		http.NotFound(w, req)
	}
}
