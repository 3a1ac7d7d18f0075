package llmjob

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/llm"
)

// Bounds of a prompts file: the bytes of one row (a chat history with a
// long document fits), and the rows of a file, since every row is held in
// memory while it is sampled.
const (
	MaxPromptRowBytes = 8 << 20
	MaxPrompts        = 1_000_000
)

// sampleOutputKeys are the keys sample writes; a prompt row may not carry
// them, or the output row would have them twice.
var sampleOutputKeys = map[string]bool{"samples": true, "answer": true, "answer_finish_reason": true,
	"finish_reasons": true, "usage": true, "embeddings": true, "logprobs": true, "answer_logprobs": true}

// promptRow is one row of a prompts file.
type promptRow struct {
	line     int
	id       string          // the id's text: a string's value or a number's literal, as entropy reads it
	rawID    json.RawMessage // written back unchanged
	prompt   string          // the "prompt" key, or
	messages []llm.Message   // the "messages" key
	keys     []string        // the other keys, in the row's order (prompt, messages and reference included)
	values   []json.RawMessage
}

// rowError is a bad row: the field at fault ("" for the whole row) and
// why.
type rowError struct {
	field string
	msg   string
}

func (e *rowError) Error() string { return e.msg }

func rowErrf(field, format string, a ...any) *rowError {
	return &rowError{field: field, msg: fmt.Sprintf(format, a...)}
}

// idText returns the text of a JSON id: a non-empty string's value or a
// number's literal.
func idText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", errors.New("missing (want a string or a number)")
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("malformed string: %v", err)
		}
		if s == "" {
			return "", errors.New("empty string")
		}
		return s, nil
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", fmt.Errorf("malformed number: %v", err)
		}
		return string(n), nil
	}
	return "", fmt.Errorf("want a string or a number, got %s", clipText(string(raw), 20))
}

func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "..."
}

// parsePromptRow reads one row: a JSON object with "id" (string or
// number), exactly one of "prompt" (a non-empty string) and "messages" (a
// non-empty list of {"role", "content", ...}), an optional "reference"
// (string or list of strings), and any other keys, kept in order. Keys
// may not repeat, nor be one that sample writes.
func parsePromptRow(b []byte) (promptRow, error) {
	var row promptRow
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return row, rowErrf("", "want a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return row, rowErrf("", "malformed JSON: %v", err)
		}
		key, ok := t.(string)
		if !ok {
			return row, rowErrf("", "malformed JSON object")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return row, rowErrf(key, "malformed JSON: %v", err)
		}
		if seen[key] {
			return row, rowErrf(key, "given twice")
		}
		seen[key] = true
		if sampleOutputKeys[key] {
			return row, rowErrf(key, "is a key sample writes; rename or drop it")
		}
		switch key {
		case "id":
			if row.id, err = idText(v); err != nil {
				return row, rowErrf("id", "%v", err)
			}
			row.rawID = v
			continue
		case "prompt":
			if err := json.Unmarshal(v, &row.prompt); err != nil || strings.TrimSpace(row.prompt) == "" {
				return row, rowErrf("prompt", "want a non-empty string")
			}
		case "messages":
			if err := json.Unmarshal(v, &row.messages); err != nil {
				if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
					return row, rowErrf("messages", "want a list of messages, got a JSON %s", te.Value)
				}
				return row, rowErrf("messages", "%v", err) // a message's own complaint

			}
			if len(row.messages) == 0 {
				return row, rowErrf("messages", "want a non-empty list of messages")
			}
		case "reference":
			var one string
			var list []string
			if json.Unmarshal(v, &one) != nil && json.Unmarshal(v, &list) != nil && string(bytes.TrimSpace(v)) != "null" {
				return row, rowErrf("reference", "want a string or a list of strings")
			}
		}
		row.keys = append(row.keys, key)
		row.values = append(row.values, v)
	}
	if _, err := dec.Token(); err != nil {
		return row, rowErrf("", "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return row, rowErrf("", "more than one JSON value on the line")
	}
	switch {
	case row.rawID == nil:
		return row, rowErrf("id", "missing (every prompt needs an id, so that a rerun can skip it)")
	case seen["prompt"] == seen["messages"]:
		return row, rowErrf("prompt", `want exactly one of "prompt" and "messages"`)
	}
	return row, nil
}

// readPromptRows reads a prompts file (JSON Lines; blank lines skipped)
// and refuses duplicate ids.
func readPromptRows(fsys fs.FS, path string) ([]promptRow, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "cannot open: " + errText(err), Err: err}
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var rows []promptRow
	first := map[string]int{}
	for line := 1; ; line++ {
		b, err := readLine(br, MaxPromptRowBytes)
		if err != nil && err != io.EOF {
			if errors.Is(err, errLongLine) {
				return nil, &fault.InputError{File: path, Line: line, Msg: fmt.Sprintf("row longer than %d bytes", MaxPromptRowBytes)}
			}
			return nil, &fault.InputError{File: path, Msg: "cannot read: " + errText(err), Err: err}
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			if line == 1 {
				t = bytes.TrimPrefix(t, []byte("\xef\xbb\xbf"))
			}
			row, perr := parsePromptRow(t)
			if perr != nil {
				var re *rowError
				errors.As(perr, &re)
				return nil, &fault.InputError{File: path, Line: line, Field: re.field, Msg: re.msg}
			}
			if l, dup := first[row.id]; dup {
				return nil, &fault.InputError{File: path, Line: line, Field: "id", Msg: fmt.Sprintf("duplicate id %q (first on line %d)", clipText(row.id, 60), l)}
			}
			if len(rows) == MaxPrompts {
				return nil, &fault.InputError{File: path, Line: line, Msg: fmt.Sprintf("more than %d prompts: split the file", MaxPrompts)}
			}
			first[row.id] = line
			row.line = line
			rows = append(rows, row)
		}
		if err == io.EOF {
			break
		}
	}
	if len(rows) == 0 {
		return nil, &fault.InputError{File: path, Msg: "no prompts (empty file)"}
	}
	return rows, nil
}

var errLongLine = errors.New("line too long")

// readLine reads up to and including the next newline, refusing lines
// longer than limit without reading them whole.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(out)+len(chunk) > limit+1 {
			return nil, errLongLine
		}
		out = append(out, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return out, err
	}
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// appendRow writes the output row of a prompt: its id, its other keys
// unchanged and in order, then what sample adds.
func appendRow(buf *bytes.Buffer, row promptRow, add []struct {
	key   string
	value any
}) error {
	buf.WriteString(`{"id":`)
	buf.Write(compactRaw(row.rawID))
	for i, k := range row.keys {
		kb, _ := json.Marshal(k)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(compactRaw(row.values[i]))
	}
	for _, a := range add {
		v, err := json.Marshal(a.value)
		if err != nil {
			return fmt.Errorf("encoding %s: %v", a.key, err)
		}
		buf.WriteString(`,"` + a.key + `":`)
		buf.Write(v)
	}
	buf.WriteString("}\n")
	return nil
}

// compactRaw removes insignificant space from a value, so that a row stays
// one line whatever spacing its input had (a value's own text is kept).
func compactRaw(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
