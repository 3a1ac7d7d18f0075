package strictjson_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/format/strictjson"
)

// inner decodes itself strictly, as a request's nested types do.
type inner struct{ A level }

// level refuses every value with an error of its own.
type level int

func (*level) UnmarshalJSON([]byte) error { return errors.New("want a level") }

func (in *inner) UnmarshalJSON(b []byte) error {
	type plain inner
	return strictjson.Unmarshal(b, (*plain)(in))
}

// An error a nested type's own strict decoding reports is passed on as
// it is: its message says "request body:" once.
func TestNestedErrorOnce(t *testing.T) {
	var dst struct{ In inner }
	err := strictjson.Unmarshal([]byte(`{"In": {"A": 1, "B": 2}}`), &dst)
	if err == nil || strings.Count(err.Error(), "request body:") > 1 {
		t.Errorf("error %v", err)
	}
	err = strictjson.Unmarshal([]byte(`{"In": {"A": 1}}`), &dst)
	if err == nil || strings.Count(err.Error(), "request body:") > 1 {
		t.Errorf("error %v", err)
	}
}
