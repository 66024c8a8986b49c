package inject

import (
	"bytes"

	"github.com/job-signal/job-signal/inject/jsonscan"
)

// memberBytes is the JSON of the value of key in the object data starts
// with, as written (the last, if key is there more than once, as a
// decoder keeps it); nil when it is not there or when data is not what it
// expects. Where readTemplate cannot take the PodSpec from the tree
// (typedFrom), it decodes the spec from these bytes instead of writing
// the spec it decoded again.
func memberBytes(data []byte, key string) []byte {
	s := jsonscan.New(bytes.NewReader(data), 512)
	if s.Peek() != '{' {
		return nil
	}
	from, to := -1, -1
	s.Object(func(k string) error {
		if k != key {
			s.Skip()
			return s.Err()
		}
		s.Peek()
		from = s.Offset()
		s.Skip()
		to = s.Offset()
		return s.Err()
	})
	if s.Err() != nil || from < 0 {
		return nil
	}
	return data[from:to]
}
