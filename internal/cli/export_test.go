package cli

import (
	"reflect"
	"strings"
)

// HelpProblems checks the help texts of a grammar against what kong shows
// by itself: a default is shown by kong as --flag="X" unless the flag has a
// placeholder, so a help text says "(default ${default})" exactly when
// kong would not. help_test.go runs it on both programs.
func HelpProblems(grammar any) []string {
	var problems []string
	eachFlag(reflect.TypeOf(grammar).Elem(), true, nil, func(_ []int, f reflect.StructField) {
		help, name := f.Tag.Get("help"), "--"+f.Tag.Get("name")
		_, hasDefault := f.Tag.Lookup("default")
		says := strings.Contains(help, "(default")
		switch {
		case help == "":
			problems = append(problems, name+": no help")
		case hasDefault && hasTag(f, "placeholder") && !strings.Contains(help, "(default ${default}"):
			problems = append(problems, name+": kong hides the default behind the placeholder: say (default ${default})")
		case hasDefault && !hasTag(f, "placeholder") && says:
			problems = append(problems, name+": says its default, which kong shows already")
		}
	})
	return problems
}
