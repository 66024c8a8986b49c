package inject

import "bytes"

// memberBytes is the JSON of the value of key in the object data starts
// with, as written (the last, if key is there more than once, as a
// decoder keeps it); nil when it is not there, when a key is written with
// escapes, or when data is not what it expects. readTemplate decodes the
// spec from these bytes instead of writing the spec it decoded again.
func memberBytes(data []byte, key string) []byte {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil
	}
	var found []byte
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for i < len(data) {
		if data[i] != '"' {
			return nil
		}
		end := skipString(data, i)
		if end < 0 {
			return nil
		}
		name := data[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			return nil
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil
		}
		start := skipSpace(data, i+1)
		stop := skipValue(data, start)
		if stop < 0 {
			return nil
		}
		if string(name) == key {
			found = data[start:stop]
		}
		i = skipSpace(data, stop)
		switch {
		case i < len(data) && data[i] == ',':
			i = skipSpace(data, i+1)
		case i < len(data) && data[i] == '}':
			return found
		default:
			return nil
		}
	}
	return nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at i, or -1.
func skipString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value that starts at i, or -1.
// It finds where the value ends, not whether it is valid: the decoder
// that read the same bytes before has said so.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				if j = skipString(data, j); j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(data) && bytes.IndexByte([]byte(" \t\n\r,}]"), data[j]) < 0 {
		j++
	}
	return j
}
