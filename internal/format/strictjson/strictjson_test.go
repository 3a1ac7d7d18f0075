package strictjson_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/strictjson"
)

type req struct {
	N    int      `json:"n"`
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		body, field, msg string
	}{
		{`{"n": 3, "name": "a"}`, "", ""},
		{`{"n": 3, "nmae": "a"}`, "nmae", "nmae: unknown field"},
		{`{"n": "three"}`, "n", "n: want a JSON number, got string"},
		{`{"tags": "a"}`, "tags", "tags: want a JSON array, got string"},
		{`[1, 2]`, "body", "body: want a JSON object, got array"},
		{`{"n": 3} {"n": 4}`, "body", "found more after it"},
		{`{"n": 3}]`, "body", "found more after it"},
		{``, "body", "empty"},
		{`{"n": 3`, "body", "truncated JSON"},
		{`{"n": 3,,}`, "body", "invalid JSON at byte"},
	} {
		var r req
		err := strictjson.Unmarshal([]byte(tc.body), &r)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			}
			continue
		}
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v (%#v), want field %q and %q", tc.body, err, fe, tc.field, tc.msg)
		}
	}
}

func TestDecodeKeepsMaxBytesError(t *testing.T) {
	for _, body := range []string{`{"name": "` + strings.Repeat("x", 100) + `"}`, `{"n": 1}` + strings.Repeat(" ", 100) + "{}"} {
		rec := httptest.NewRecorder()
		r := http.MaxBytesReader(rec, io.NopCloser(strings.NewReader(body)), 20)
		var v req
		var mbe *http.MaxBytesError
		if err := strictjson.Decode(r, &v); !errors.As(err, &mbe) {
			t.Errorf("%.20s...: %v, want a MaxBytesError", body, err)
		}
	}
}
