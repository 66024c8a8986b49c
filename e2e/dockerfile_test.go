// This file is long because its checks need a small Dockerfile reader
// (stages, continued lines, ARG scoping, quoted LABEL values) beside them.

package e2e

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The e2e suite builds the Dockerfile's prebuilt target (buildah, offline)
// while users pull the release target: these checks keep the two final
// stages alike, so what the suite tests is what users run. Runs in the plain
// "go test ./...": no build tag, no root.

// stage is one FROM block of a Dockerfile.
type stage struct {
	name, from string
	platform   string // FROM --platform=...
	instrs     []instruction
}

type instruction struct {
	cmd  string // upper case: COPY, USER, ...
	args string
}

// parseDockerfile splits a Dockerfile into stages of instructions, joining
// continued lines and dropping comments.
func parseDockerfile(text string) []stage {
	var stages []stage
	var logical strings.Builder
	flush := func() {
		line := strings.TrimSpace(logical.String())
		logical.Reset()
		if line == "" {
			return
		}
		cmd, args, _ := strings.Cut(line, " ")
		cmd, args = strings.ToUpper(cmd), strings.TrimSpace(args)
		if cmd == "FROM" {
			f := strings.Fields(args)
			st := stage{}
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				if p, ok := strings.CutPrefix(f[0], "--platform="); ok {
					st.platform = p
				}
				f = f[1:]
			}
			if len(f) > 0 {
				st.from = f[0]
			}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
			return
		}
		if len(stages) > 0 {
			s := &stages[len(stages)-1]
			s.instrs = append(s.instrs, instruction{cmd, args})
		}
	}
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "#") {
			continue // a comment, also inside a continued instruction
		}
		if strings.HasSuffix(line, `\`) {
			logical.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		logical.WriteString(line)
		flush()
	}
	flush()
	return stages
}

// finalImage is what a final stage puts in the image and how it runs.
type finalImage struct {
	Files      []string // absolute paths of the copied files
	Labels     map[string]string
	User       string
	Entrypoint string
	Cmd        string
}

func summarize(t *testing.T, s stage) finalImage {
	t.Helper()
	var img finalImage
	for _, in := range s.instrs {
		switch in.cmd {
		case "COPY", "ADD":
			var words []string
			for _, w := range strings.Fields(in.args) {
				if !strings.HasPrefix(w, "--") { // --from=build, --chmod=...
					words = append(words, w)
				}
			}
			if len(words) < 2 {
				t.Fatalf("stage %s: cannot read %s %s", s.name, in.cmd, in.args)
			}
			dest := words[len(words)-1]
			for _, src := range words[:len(words)-1] {
				if strings.HasSuffix(dest, "/") {
					img.Files = append(img.Files, path.Join(dest, path.Base(src)))
				} else {
					img.Files = append(img.Files, dest)
				}
			}
		case "LABEL":
			labels, err := parseLabels(in.args)
			if err != nil {
				t.Fatalf("stage %s: %v", s.name, err)
			}
			if img.Labels == nil {
				img.Labels = map[string]string{}
			}
			maps.Copy(img.Labels, labels)
		case "USER":
			img.User = in.args
		case "ENTRYPOINT":
			img.Entrypoint = in.args
		case "CMD":
			img.Cmd = in.args
		case "RUN":
			t.Errorf("stage %s runs %q: a final stage must not need a shell", s.name, in.args)
		}
	}
	sort.Strings(img.Files)
	return img
}

// parseLabels reads a LABEL instruction's key=value pairs; a value may be
// double-quoted (with \" and \\ escapes) to hold spaces.
func parseLabels(args string) (map[string]string, error) {
	labels := map[string]string{}
	rest := strings.TrimSpace(args)
	for rest != "" {
		key, after, ok := strings.Cut(rest, "=")
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			return nil, fmt.Errorf("LABEL %s: want key=value pairs", args)
		}
		var value strings.Builder
		i := 0
		if strings.HasPrefix(after, `"`) {
			for i = 1; i < len(after) && after[i] != '"'; i++ {
				if after[i] == '\\' && i+1 < len(after) {
					i++
				}
				value.WriteByte(after[i])
			}
			if i == len(after) {
				return nil, fmt.Errorf("LABEL %s: unterminated quote", args)
			}
			i++
		} else {
			for ; i < len(after) && after[i] != ' ' && after[i] != '\t'; i++ {
				value.WriteByte(after[i])
			}
		}
		labels[key] = value.String()
		rest = strings.TrimSpace(after[i:])
	}
	return labels, nil
}

// stageArgs are the build arguments a stage declares (ARG NAME[=default]):
// a stage sees a build argument only if it declares it.
func stageArgs(s stage) map[string]bool {
	args := map[string]bool{}
	for _, in := range s.instrs {
		if in.cmd == "ARG" {
			for _, a := range strings.Fields(in.args) {
				name, _, _ := strings.Cut(a, "=")
				args[name] = true
			}
		}
	}
	return args
}

var argRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

func readDockerfile(t *testing.T) []stage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	return parseDockerfile(string(b))
}

func findStage(t *testing.T, stages []stage, name string) stage {
	t.Helper()
	for _, s := range stages {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("the Dockerfile has no stage %q", name)
	return stage{}
}

func TestDockerfileTargetsMatch(t *testing.T) {
	stages := readDockerfile(t)
	release, prebuilt := findStage(t, stages, "release"), findStage(t, stages, "prebuilt")
	if last := stages[len(stages)-1].name; last != "release" {
		t.Errorf("the last stage (what a plain docker build makes) is %q, want release", last)
	}
	if !strings.HasPrefix(release.from, "gcr.io/distroless/static") || !strings.HasSuffix(release.from, ":nonroot") {
		t.Errorf("release is FROM %s, want a distroless static nonroot base", release.from)
	}
	if prebuilt.from != "scratch" {
		t.Errorf("prebuilt is FROM %s, want scratch (buildable without a registry)", prebuilt.from)
	}
	r, p := summarize(t, release), summarize(t, prebuilt)
	if !reflect.DeepEqual(r, p) {
		t.Errorf("the final stages differ:\nrelease:  %+v\nprebuilt: %+v", r, p)
	}
	want := []string{"/usr/local/bin/job-signal", "/usr/local/bin/sidecar-watch"}
	if !reflect.DeepEqual(r.Files, want) {
		t.Errorf("release copies %v, want %v", r.Files, want)
	}
	if r.User != "65532:65532" {
		t.Errorf("release runs as %q, want 65532:65532 (distroless nonroot)", r.User)
	}
	if r.Entrypoint != `["/usr/local/bin/job-signal"]` {
		t.Errorf("release entrypoint is %s", r.Entrypoint)
	}
	for key, want := range map[string]string{
		"org.opencontainers.image.source":   "https://github.com/job-signal/job-signal",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.version":  "${VERSION}",
		"org.opencontainers.image.revision": "${REVISION}",
	} {
		if got := r.Labels[key]; got != want {
			t.Errorf("release label %s is %q, want %q", key, got, want)
		}
	}
	// A build argument not declared in the stage expands to nothing there.
	for _, s := range []stage{release, prebuilt} {
		declared := stageArgs(s)
		for _, in := range s.instrs {
			for _, m := range argRef.FindAllStringSubmatch(in.args, -1) {
				if !declared[m[1]] {
					t.Errorf("stage %s uses ${%s} without declaring ARG %s: it would be empty", s.name, m[1], m[1])
				}
			}
		}
	}
}

// TestDockerfileCrossCompiles: the Go stage runs on the build machine's
// platform and compiles for the target one, so a multi-platform build
// (make image IMAGE_TARGET=release, buildah or docker buildx with several
// --platform values) runs no emulated compiler.
func TestDockerfileCrossCompiles(t *testing.T) {
	build := findStage(t, readDockerfile(t), "build")
	if build.platform != "$BUILDPLATFORM" {
		t.Errorf("the build stage is FROM --platform=%q, want $BUILDPLATFORM", build.platform)
	}
	declared := stageArgs(build)
	for _, arg := range []string{"TARGETOS", "TARGETARCH", "VERSION"} {
		if !declared[arg] {
			t.Errorf("the build stage does not declare ARG %s", arg)
		}
	}
	var goBuild string
	for _, in := range build.instrs {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			goBuild = in.args
		}
	}
	for _, want := range []string{"GOOS=${TARGETOS}", "GOARCH=${TARGETARCH}"} {
		if !strings.Contains(goBuild, want) {
			t.Errorf("the build stage's go build lacks %s: %s", want, goBuild)
		}
	}
}

// TestDockerfileBasesFullyQualified: docker, buildah and podman resolve a
// short name (golang) differently, or ask which registry to use; a fully
// qualified one (docker.io/library/golang) means the same everywhere.
func TestDockerfileBasesFullyQualified(t *testing.T) {
	stages := readDockerfile(t)
	names := map[string]bool{}
	for _, s := range stages {
		registry, _, hasPath := strings.Cut(s.from, "/")
		switch {
		case s.from == "scratch" || names[s.from]:
		case !hasPath || !strings.ContainsAny(registry, ".:") && registry != "localhost":
			t.Errorf("stage %s is FROM %s: name the registry (docker.io/library/..., gcr.io/...)", s.name, s.from)
		}
		names[s.name] = true
	}
}

// TestLicenseMatchesLabel: the image says Apache-2.0; LICENSE holds it.
func TestLicenseMatchesLabel(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Apache License", "Version 2.0, January 2004", "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("LICENSE does not hold the Apache License 2.0 text (no %q)", want)
		}
	}
}

// TestDockerfileBuildsStaticStrippedStamped checks the release binaries'
// build command: static, reproducible paths, stripped, version stamped.
func TestDockerfileBuildsStaticStrippedStamped(t *testing.T) {
	stages := readDockerfile(t)
	var build string
	for _, s := range stages {
		for _, in := range s.instrs {
			if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
				build = in.args
			}
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-s -w", "internal/version.Stamped=${VERSION}", "./cmd/job-signal", "./cmd/sidecar-watch"} {
		if !strings.Contains(build, want) {
			t.Errorf("the go build of the Dockerfile lacks %q: %s", want, build)
		}
	}
}

func TestParseDockerfile(t *testing.T) {
	stages := parseDockerfile("ARG X=1\nFROM --platform=$B golang AS build\nRUN a \\\n  # note\n  b\nFROM scratch\nCOPY --from=build /a /b/ /c/\n" +
		"LABEL a=1 \\\n  b=\"two words\" c=\"q\\\"\"\n")
	if len(stages) != 2 || stages[0].name != "build" || stages[0].from != "golang" || stages[0].platform != "$B" || stages[1].name != "" {
		t.Fatalf("stages: %+v", stages)
	}
	if got := stages[0].instrs[0]; got.cmd != "RUN" || got.args != "a  b" {
		t.Errorf("continued RUN: %+v", got)
	}
	img := summarize(t, stages[1])
	if !reflect.DeepEqual(img.Files, []string{"/c/a", "/c/b"}) {
		t.Errorf("files: %v", img.Files)
	}
	if want := map[string]string{"a": "1", "b": "two words", "c": `q"`}; !reflect.DeepEqual(img.Labels, want) {
		t.Errorf("labels: %q, want %q", img.Labels, want)
	}
	if _, err := parseLabels(`a="open`); err == nil {
		t.Error("an unterminated quote was accepted")
	}
}
