package strictjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// unknownField returns the first key of the JSON object at the start of
// data (which may be cut short) that names no field of v, a pointer to a
// struct, as encoding/json matches them: by the json tag's name or the
// field's name, case-insensitively, through embedded structs. It reports
// false when every key of the object's top level is a field (an unknown
// key further down is not looked for), and when v decodes itself (a
// json.Unmarshaler, whose fields need not be its struct's: it reports
// its own unknown fields).
func unknownField(data []byte, v any) (string, bool) {
	if _, ok := v.(json.Unmarshaler); ok {
		return "", false
	}
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return "", false
	}
	names := fieldNames(t, nil)
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		key, _ := tok.(string)
		if !known(names, key) {
			return key, true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

func known(names []string, key string) bool {
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return true
		}
	}
	return false
}

// fieldNames appends the JSON names of t's fields to names.
func fieldNames(t reflect.Type, names []string) []string {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			names = fieldNames(f.Type, names)
		case !f.IsExported():
		case tag != "":
			names = append(names, tag)
		default:
			names = append(names, f.Name)
		}
	}
	return names
}
