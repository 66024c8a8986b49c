package cli

import "reflect"

// tags are the struct tags of one field that the programs read besides
// kong: a flag's name, whether it is an argument or a command, and the
// project's own nonzero (see CheckDurations).
type tags struct {
	name              string
	arg, cmd, nonzero bool
}

func tagsOf(f reflect.StructField) tags {
	_, arg := f.Tag.Lookup("arg")
	_, cmd := f.Tag.Lookup("cmd")
	_, nonzero := f.Tag.Lookup("nonzero")
	return tags{name: f.Tag.Get("name"), arg: arg, cmd: cmd, nonzero: nonzero}
}
