package inject_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
)

// expand is the kubelet's $(VAR) expansion of command and args, as the
// Kubernetes API documents it: $(VAR) becomes VAR's value when VAR is
// defined and stays as written otherwise; $$ becomes $; any other $ stays.
func expand(s string, env map[string]string) string {
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			out.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			out.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				out.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := env[name]; ok {
				out.WriteString(v)
			} else {
				out.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			out.WriteByte('$')
		}
	}
	return out.String()
}

func expandAll(list []string, env map[string]string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = expand(s, env)
	}
	return out
}

// TestEffective: what the process runs is the same before injection (the
// kubelet expands command and args, the runtime adds the image's
// ENTRYPOINT/CMD unexpanded) and after (everything is in args, expanded).
func TestEffective(t *testing.T) {
	env := map[string]string{"USER": "alice", "HOME": "/home/alice"}
	img := &inject.ImageConfig{Entrypoint: []string{"/entry", "$(HOME)", "$$", "a$"}, Cmd: []string{"--cmd=$(USER)"}}
	for _, tc := range []struct {
		name          string
		command, args []string
		img           *inject.ImageConfig
		want          []string // what the process gets
	}{
		{"command and args", []string{"/bin/sh", "$(USER)"}, []string{"$$(USER)"}, img, []string{"/bin/sh", "alice", "$(USER)"}},
		{"command only: CMD ignored", []string{"/bin/run"}, nil, img, []string{"/bin/run"}},
		{"args only: ENTRYPOINT + args", nil, []string{"$(USER)"}, img, []string{"/entry", "$(HOME)", "$$", "a$", "alice"}},
		{"empty command is none", []string{}, []string{"x"}, img, []string{"/entry", "$(HOME)", "$$", "a$", "x"}},
		{"neither: ENTRYPOINT + CMD", nil, nil, img, []string{"/entry", "$(HOME)", "$$", "a$", "--cmd=$(USER)"}},
		{"ENTRYPOINT [\"\"] is none", nil, nil, &inject.ImageConfig{Entrypoint: []string{""}, Cmd: []string{"/cmd"}}, []string{"/cmd"}},
		{"CMD only", nil, []string{}, &inject.ImageConfig{Cmd: []string{"/cmd", "1"}}, []string{"/cmd", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := corev1.Container{Command: tc.command, Args: tc.args}
			line, err := inject.Effective(&c, tc.img)
			if err != nil {
				t.Fatal(err)
			}
			if got := expandAll(line, env); !slices.Equal(got, tc.want) {
				t.Errorf("the process would get %q, want %q (args %q)", got, tc.want, line)
			}
		})
	}
	if _, err := inject.Effective(&corev1.Container{}, &inject.ImageConfig{}); err == nil {
		t.Error("no command anywhere: want an error")
	}
}
