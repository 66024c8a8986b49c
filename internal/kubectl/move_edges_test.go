package kubectl

import (
	"strings"
	"testing"

	"github.com/job-signal/job-signal/inject"
)

// TestMoveEdges: the layouts around a moved item, each moved and back
// byte for byte (checkMoves), or refused in one line naming the layout.
func TestMoveEdges(t *testing.T) {
	pod := func(spec string) string { return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n" + spec }
	for _, tc := range []struct {
		name     string
		input    string
		sidecars []sidecarMove
		want     string // the moved text, or the refusal
	}{
		{"the last item of a file without a final newline",
			pod("  containers:\n  - name: app\n    image: a\n  - name: proxy\n    image: p"),
			[]sidecarMove{{1, inject.Fields{always}}},
			pod("  initContainers:\n  - name: proxy\n    image: p\n    restartPolicy: Always\n  containers:\n  - name: app\n    image: a")},
		{"two sidecars into a new list, in start order, their comments with them",
			pod("  containers:\n    # first\n    - name: a\n      image: a\n    - name: app\n      image: m\n\n    # second\n    - name: b\n      image: b\n      # env: []\n"),
			[]sidecarMove{{2, inject.Fields{always}}, {0, inject.Fields{always}}},
			pod("  initContainers:\n\n    # second\n    - name: b\n      image: b\n      restartPolicy: Always\n      # env: []\n    # first\n    - name: a\n      image: a\n      restartPolicy: Always\n  containers:\n    - name: app\n      image: m\n")},
		{"a block scalar re-indented with its item",
			pod("  containers:\n      - name: app\n        image: a\n      - name: proxy\n        image: p\n        args:\n          - |2\n              indented\n            text\n  volumes: []\n"),
			[]sidecarMove{{1, inject.Fields{always}}},
			pod("  initContainers:\n    - name: proxy\n      image: p\n      args:\n        - |2\n            indented\n          text\n      restartPolicy: Always\n  containers:\n      - name: app\n        image: a\n  volumes: []\n")},
		{"initContainers null in pretty JSON",
			"{\n  \"kind\": \"Pod\",\n  \"apiVersion\": \"v1\",\n  \"spec\": {\n    \"initContainers\": null,\n    \"containers\": [\n      {\"name\": \"app\", \"image\": \"a\"},\n      {\"name\": \"proxy\", \"image\": \"p\"}\n    ]\n  }\n}\n",
			[]sidecarMove{{1, inject.Fields{always}}},
			"{\n  \"kind\": \"Pod\",\n  \"apiVersion\": \"v1\",\n  \"spec\": {\n    \"initContainers\": [\n      {\"name\": \"proxy\", \"image\": \"p\", \"restartPolicy\": \"Always\"}\n    ],\n    \"containers\": [\n      {\"name\": \"app\", \"image\": \"a\"}\n    ]\n  }\n}\n"},
		{"into an empty flow list, from a flow list",
			pod("  initContainers: []\n  containers: [{name: app, image: a}, {name: proxy, image: p}]\n"),
			[]sidecarMove{{1, inject.Fields{always}}},
			pod("  initContainers: [{name: proxy, image: p, restartPolicy: Always}]\n  containers: [{name: app, image: a}]\n")},
		{"a block item into an empty flow list: a block list, [] again when moved back",
			pod("  initContainers: []\n  containers:\n  - name: app\n    image: a\n  - name: proxy\n    image: p\n"),
			[]sidecarMove{{1, inject.Fields{always}}},
			pod("  initContainers:\n  - name: proxy\n    image: p\n    restartPolicy: Always\n  containers:\n  - name: app\n    image: a\n")},
		{"a block item into [ ]: refused",
			pod("  initContainers: [ ]\n  containers:\n  - name: app\n    image: a\n  - name: proxy\n    image: p\n"),
			[]sidecarMove{{1, inject.Fields{always}}},
			"line 10: cannot edit in place: a container in block style that moves into a flow list ([ ]): write that list in block style, or leave it out when it is empty"},
		{"a block item into a flow list: refused",
			pod("  initContainers: [{name: own, image: o}]\n  containers:\n  - name: app\n    image: a\n  - name: proxy\n    image: p\n"),
			[]sidecarMove{{1, inject.Fields{always}}},
			"line 10: cannot edit in place: a container in block style that moves into a flow list ([ ])"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checkMoves(t, tc.input, tc.sidecars)
			if err != nil {
				got = err.Error()
			}
			if !strings.HasPrefix(got, tc.want) || err != nil && strings.Contains(got, "\n") {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestMoveToIndex: a move to an index of a list puts the item there, and
// a move back to its index in containers gives the input.
func TestMoveToIndex(t *testing.T) {
	input := "spec:\n  initContainers:\n  - name: own\n  containers:\n  - name: app\n  - name: proxy # p\n"
	moved, err := editText(t, input, false, inject.Op{Op: "move", From: "/spec/containers/1", Path: "/spec/initContainers/0"})
	if want := "spec:\n  initContainers:\n  - name: proxy # p\n  - name: own\n  containers:\n  - name: app\n"; err != nil || moved != want {
		t.Fatalf("%v\n%s\nwant\n%s", err, moved, want)
	}
	back, err := editText(t, moved, false, inject.Op{Op: "move", From: "/spec/initContainers/0", Path: "/spec/containers/1"})
	if err != nil || back != input {
		t.Fatalf("%v\n%s", err, back)
	}
	for _, op := range []inject.Op{
		{Op: "move", From: "/spec/containers/5", Path: "/spec/initContainers/-"},
		{Op: "move", From: "/spec/containers/0", Path: "/spec/initContainers/7"},
		{Op: "move", From: "/spec/containers/0", Path: "/spec/nope/-"},
	} {
		if _, err := editText(t, input, false, op); err == nil || !strings.HasPrefix(err.Error(), "move "+op.From+" to "+op.Path+": ") {
			t.Errorf("%s to %s: %v, want an error naming the move", op.From, op.Path, err)
		}
	}
}
