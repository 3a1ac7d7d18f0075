package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/genlens/genlens/fault"
)

// WithDefault adds to a field error of Validate on a field that req
// leaves at its zero value, where def (the NewXRequest defaults) sets it,
// which default to use: a request built as a zero value rather than from
// its constructor is told what it lacks. Other errors pass unchanged.
func WithDefault[R any](err error, req *R, def R) error {
	var fe *fault.FieldError
	if err == nil || !errors.As(err, &fe) {
		return err
	}
	got, want := jsonField(req, fe.Field), jsonField(&def, fe.Field)
	if zeroJSON(got) && !zeroJSON(want) {
		fe.Msg += fmt.Sprintf(" (the default is %s)", strings.Trim(string(want), `"`))
	}
	return err
}

// jsonField returns the JSON value of a field of v, nil when absent.
func jsonField(v any, field string) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m[field]
}

// zeroJSON reports whether a JSON value is absent or a zero value.
func zeroJSON(v json.RawMessage) bool {
	switch string(v) {
	case "", "null", `""`, "0", "false", "[]", "{}":
		return true
	}
	return false
}
