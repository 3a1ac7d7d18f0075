package llm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		err     error
		refused bool
	}{
		{&StatusError{StatusCode: 400, Status: "400 Bad Request", Message: "prompt format"}, true},
		{fmt.Errorf("wrapped: %w", &StatusError{StatusCode: 422, Status: "422 Unprocessable Entity"}), true},
		{&StatusError{StatusCode: 401, Status: "401 Unauthorized"}, false},
		{&StatusError{StatusCode: 404, Status: "404 Not Found"}, false},
		{&StatusError{StatusCode: 503, Status: "503 Service Unavailable"}, false},
		{errors.New("connection refused"), false},
		{nil, false},
	} {
		why := Refusal(tc.err)
		if (why != nil) != tc.refused {
			t.Errorf("%v: refusal %v, want %v", tc.err, why, tc.refused)
		}
	}
	if why := Refusal(&StatusError{StatusCode: 400, Status: "400 Bad Request", Message: "prompt format"}); why.Error() != "the model refused the question (400 Bad Request: prompt format)" {
		t.Errorf("%q", why)
	}
}

func TestQuestionTemplates(t *testing.T) {
	for _, q := range Questions {
		for _, p := range q.Needs {
			if !strings.Contains(q.Template, p) {
				t.Errorf("%s: its own template lacks %s", q.Score, p)
			}
		}
	}
	q, ok := QuestionOf("verbalized-1s")
	if !ok {
		t.Fatal("no verbalized-1s")
	}
	fsys := fstest.MapFS{"good.txt": {Data: []byte("Q: {question}")}, "bad.txt": {Data: []byte("Q: {answer}")}}
	if got, err := q.ReadTemplate(fsys, "good.txt"); err != nil || q.Text(got, "2+2?", "4") != "Q: 2+2?" {
		t.Errorf("good template: %q, %v", got, err)
	}
	if _, err := q.ReadTemplate(fsys, "bad.txt"); err == nil || !strings.Contains(err.Error(), "must place the question") {
		t.Errorf("template without {question}: %v", err)
	}
	if got, err := q.ReadTemplate(fsys, ""); err != nil || got != q.Template {
		t.Errorf("default: %v", err)
	}
}
