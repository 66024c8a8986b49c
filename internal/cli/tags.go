package cli

import (
	"reflect"
	"slices"
	"strconv"
)

// tags are the struct tags of one field that the programs' command lines
// use, read in one pass: reflect's Lookup reads a tag from its start for
// each key, and these tags are mostly help text, read at every start.
type tags struct {
	name, env, def, enum, sep, passthrough string
	hasDef, arg, cmd, nonzero              bool
	// kongOnly: a tag whose meaning only kong implements (see ParseQuick).
	kongOnly bool
}

// tagsKongOnly are the tags ParseQuick leaves to kong.
var tagsKongOnly = []string{"short", "type", "xor", "and", "required", "negatable", "aliases", "mapsep",
	"prefix", "envprefix", "embed", "set", "kong", "format", "group"}

// tagsOf reads f's tags. A tag that does not follow the key:"value"
// convention ends the reading, as it ends reflect's.
func tagsOf(f reflect.StructField) tags {
	var t tags
	s := string(f.Tag)
	for {
		i := 0
		for i < len(s) && s[i] == ' ' {
			i++
		}
		s = s[i:]
		i = 0
		for i < len(s) && s[i] > ' ' && s[i] != ':' && s[i] != '"' && s[i] != 0x7f {
			i++
		}
		if i == 0 || i+1 >= len(s) || s[i] != ':' || s[i+1] != '"' {
			return t
		}
		key := s[:i]
		s = s[i+1:]
		i = 1
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(s) {
			return t
		}
		quoted := s[:i+1]
		s = s[i+1:]
		t.set(key, quoted)
	}
}

func (t *tags) set(key, quoted string) {
	value := func() string {
		v, err := strconv.Unquote(quoted)
		if err != nil {
			return ""
		}
		return v
	}
	switch key {
	case "name":
		t.name = value()
	case "env":
		t.env = value()
	case "default":
		t.def, t.hasDef = value(), true
	case "enum":
		t.enum = value()
	case "sep":
		t.sep = value()
	case "passthrough":
		t.passthrough = value()
	case "arg":
		t.arg = true
	case "cmd":
		t.cmd = true
	case "nonzero":
		t.nonzero = true
	default:
		t.kongOnly = t.kongOnly || slices.Contains(tagsKongOnly, key)
	}
}
