package dataio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"

	"github.com/genlens/genlens/fault"
)

// MaxSamplesPerRecord bounds the samples of one prompt. Every kernel
// score compares all pairs of a prompt's samples, so memory and time grow
// with the square: 40,000 samples of a 270 KB JSONL file took 6.3 GB.
// Papers and tools sample 5 to 100 answers per prompt.
var MaxSamplesPerRecord = 4096

// Record is one prompt of sampled LLM answers (JSONL object or Parquet row
// with the same fields).
type Record struct {
	ID          string
	Samples     []string
	Embeddings  [][]float64 // optional; one vector per sample when present
	Answer      *string     // optional
	Reference   []string    // JSON field "reference" may be a string or a list of strings; nil when absent
	Correct     *bool       // optional
	JudgeScores []*float64  // optional JSON field "judge_scores" (entries may be null)
	// Question is the row's "prompt", or the content of the last user
	// message of its "messages" ("" when it has neither): what the
	// answers answer, for entailment judges and p(True).
	Question string
	// Logprobs holds each sample's tokens (JSON "logprobs", as `genlens
	// sample --logprobs` writes it); nil when the row has none.
	Logprobs [][]Token
	// AnswerLogprobs holds the answer's tokens (JSON "answer_logprobs");
	// nil when absent.
	AnswerLogprobs []Token
	Line           int // 1-based line (JSONL) or row (Parquet) it came from, for error messages
}

// ReadRecords reads prompts with sampled answers from a JSON Lines file
// (.jsonl, .ndjson or .json; the file may instead hold one JSON array of
// objects; ".gz" is decompressed on the fly) or a Parquet file (.parquet).
//
// Fields: "samples" (required, a list of strings), "id" (a string or a
// number, whose text is kept; "row-<line>" when absent or null),
// "embeddings" (a list of one numeric vector per sample, all of the same
// length in the whole file), "answer" (string), "reference" (string or
// list of strings), "correct" (boolean), "judge_scores" (list of numbers
// or nulls), "prompt" or "messages" (the question, see Record.Question),
// "logprobs" (one list of tokens {"token", "logprob", "top"?} per sample,
// "top" a list of the alternatives {"token", "logprob"}; "token", the
// text, may be absent) and "answer_logprobs" (the answer's tokens; in
// Parquet, a LIST of LIST of structs and a LIST of structs with those
// fields). The texts kept of a Parquet file (samples, tokens) are
// bounded as its columns are, to MaxCompressionRatio times its size past
// a floor. Unknown fields are
// ignored; null or an empty list counts as absent for the optional fields.
// Blank lines are skipped.
//
// Python's json module writes NaN and Infinity, which are not JSON; they
// are recognised so the error can say which value it is.
func ReadRecords(path string) ([]Record, error) {
	return ReadRecordsFS(HostFS, path)
}

// ReadRecordsFS is ReadRecords on the file name in fsys.
func ReadRecordsFS(fsys fs.FS, path string) ([]Record, error) {
	ext, gz := fileExt(path)
	switch ext {
	case ".parquet":
		if gz {
			break
		}
		return readParquet(fsys, path)
	case ".jsonl", ".ndjson", ".json":
		r, _, closeFn, err := openInput(fsys, path, gz)
		if err != nil {
			return nil, err
		}
		defer closeFn()
		return decodeJSONL(src{file: path, stream: gz}, r)
	}
	return nil, &fault.InputError{File: path, Msg: "unknown file type: want .jsonl, .json or .parquet"}
}

// decodeJSONL reads JSON Lines (or one JSON array) from r.
func decodeJSONL(s src, r io.Reader) ([]Record, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	// Skip a UTF-8 byte order mark and leading space to see whether the
	// document is one JSON array rather than JSON Lines.
	if b, err := br.Peek(3); err == nil && string(b) == "\xef\xbb\xbf" {
		br.Discard(3)
	}
	line := 1
	for {
		b, err := br.Peek(1)
		if err != nil {
			break
		}
		switch b[0] {
		case '\n':
			line++
			fallthrough
		case ' ', '\t', '\r':
			br.Discard(1)
			continue
		case '[':
			return decodeJSONArray(s, br, line)
		}
		break
	}

	d := recordDecoder{src: s}
	var recs []Record
	for ; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, readErr(s, err, "cannot read")
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			rec, derr := d.line(line, t)
			if derr != nil {
				return nil, derr
			}
			recs = append(recs, rec)
		}
		if err == io.EOF {
			break
		}
	}
	if len(recs) == 0 {
		return nil, s.errf(0, "", "no records (empty file)")
	}
	return recs, nil
}

// decodeJSONArray reads a document holding one JSON array of objects.
// Record.Line is the line on which each object starts.
func decodeJSONArray(s src, r io.Reader, firstLine int) ([]Record, error) {
	doc, err := io.ReadAll(r)
	if err != nil {
		return nil, readErr(s, err, "cannot read")
	}
	if !json.Valid(doc) {
		// Replacing NaN/Infinity keeps every newline, so line numbers
		// computed on the new bytes are those of the file.
		doc = sanitizeNonFinite(doc)
	}
	lineAt := func(off int64) int {
		off = min(max(off, 0), int64(len(doc)))
		return firstLine + bytes.Count(doc[:off], []byte{'\n'})
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	if _, err := dec.Token(); err != nil { // the '[' we peeked at
		return nil, jsonErr(s, doc, err, lineAt)
	}
	d := recordDecoder{src: s}
	var recs []Record
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonErr(s, doc, err, lineAt)
		}
		rec, err := d.value(lineAt(dec.InputOffset()-int64(len(raw))), raw)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, jsonErr(s, doc, err, lineAt)
	}
	if rest := bytes.TrimSpace(doc[dec.InputOffset():]); len(rest) > 0 {
		return nil, s.errf(lineAt(dec.InputOffset()), "", "unexpected data after the JSON array")
	}
	if len(recs) == 0 {
		return nil, s.errf(0, "", "no records (empty array)")
	}
	return recs, nil
}

// jsonErr converts an encoding/json error to an InputError on the right
// line.
func jsonErr(s src, doc []byte, err error, lineAt func(int64) int) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return s.errf(lineAt(se.Offset), "", "invalid JSON: "+se.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return s.errf(lineAt(int64(len(doc))), "", "invalid JSON: unexpected end of input")
	}
	return s.errf(0, "", "invalid JSON: "+err.Error())
}

// Sentinels stand in for Python's NaN/Infinity tokens after
// sanitizeNonFinite; the NUL byte keeps them apart from real strings.
const (
	sentNaN    = "\x00NaN"
	sentPosInf = "\x00+Inf"
	sentNegInf = "\x00-Inf"
)

// sanitizeNonFinite replaces the bare tokens NaN, Infinity and -Infinity
// outside strings with sentinel strings, so a file written by Python's
// json.dumps parses and the offending value can be reported by position.
// Newlines are kept, so line numbers do not move.
func sanitizeNonFinite(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch c {
			case '\\':
				if i+1 < len(b) {
					i++
					out = append(out, b[i])
				}
			case '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			out = append(out, `"\u0000NaN"`...)
			i += len("NaN") - 1
			continue
		case bytes.HasPrefix(b[i:], []byte("-Infinity")):
			out = append(out, `"\u0000-Inf"`...)
			i += len("-Infinity") - 1
			continue
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			out = append(out, `"\u0000+Inf"`...)
			i += len("Infinity") - 1
			continue
		}
		out = append(out, c)
	}
	return out
}

// recordDecoder validates records and remembers the embedding dimension
// of the first record that had embeddings, to check the others against.
type recordDecoder struct {
	src     src
	dim     int
	dimLine int
	// textLimit, when positive, bounds the bytes of the texts kept of
	// the whole file (samples, tokens and their alternatives), textKept
	// their count so far. A JSON text is never longer than the bytes that
	// spell it, which the readers bound already; a Parquet column of
	// texts can be dictionary-encoded, one text spelled once and repeated
	// by reference, so what its footer declares says nothing of what its
	// rows hold once decoded (5 MB of a file of 6 MB decoded to 1 GB).
	textLimit, textKept int64
	fileSize            int64 // of a Parquet file, for keepText's message
}

// textBytes is what keepText counts for a text: its bytes and the
// string header that holds them.
func textBytes(s string) int64 { return int64(len(s)) + 16 }

// keepText counts s among the texts kept, and refuses the file once they
// pass textLimit.
func (d *recordDecoder) keepText(line int, field, s string) error {
	if d.textLimit <= 0 {
		return nil
	}
	d.textKept += textBytes(s)
	if d.textKept > d.textLimit {
		return d.src.errf(line, field, fmt.Sprintf("the texts of the rows up to here decode to more than %s, more than %d times the file's %s (a text repeated through a dictionary-encoded column?); see dataio.MaxCompressionRatio",
			fmtBytes(d.textLimit), MaxCompressionRatio, fmtBytes(d.fileSize)))
	}
	return nil
}

// line decodes one JSON Lines line.
func (d *recordDecoder) line(line int, b []byte) (Record, error) {
	v, err := decodeOne(b)
	if err != nil {
		if v2, err2 := decodeOne(sanitizeNonFinite(b)); err2 == nil {
			v, err = v2, nil
		}
	}
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Record{}, d.src.errf(line, "", fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, se.Error()))
		}
		return Record{}, d.src.errf(line, "", "invalid JSON: "+err.Error())
	}
	return d.object(line, v)
}

// value decodes one element of a JSON array document.
func (d *recordDecoder) value(line int, raw json.RawMessage) (Record, error) {
	v, err := decodeOne(raw)
	if err != nil {
		v, err = decodeOne(sanitizeNonFinite(raw))
	}
	if err != nil {
		return Record{}, d.src.errf(line, "", "invalid JSON: "+err.Error())
	}
	return d.object(line, v)
}

// decodeOne decodes exactly one JSON value, keeping numbers as text.
func decodeOne(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if rest := bytes.TrimSpace(b[dec.InputOffset():]); len(rest) > 0 {
		return nil, fmt.Errorf("more than one JSON value on the line (extra %q)", clip(string(rest), 20))
	}
	return v, nil
}

func (d *recordDecoder) object(line int, v any) (Record, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Record{}, d.src.errf(line, "", "want a JSON object, got "+typeName(v))
	}
	return d.record(line, m)
}

// record validates one record given as a generic map, whichever format it
// came from: JSON gives json.Number, Parquet gives Go numeric types.
func (d *recordDecoder) record(line int, m map[string]any) (Record, error) {
	fail := func(field, msg string) (Record, error) {
		return Record{}, d.src.errf(line, field, msg)
	}
	rec := Record{Line: line}

	switch id := m["id"].(type) {
	case nil:
		rec.ID = "row-" + strconv.Itoa(line)
	case string:
		if isSentinel(id) {
			return fail("id", "is "+id[1:])
		}
		rec.ID = id
	case []byte:
		rec.ID = string(id)
	case json.Number:
		rec.ID = string(id)
	default:
		f, ok := toFloat(id)
		if !ok {
			return fail("id", "want a string or a number, got "+typeName(id))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fail("id", "is "+fmtNonFinite(f))
		}
		rec.ID = numText(id)
	}

	sv, present := m["samples"]
	if !present {
		return fail("samples", "missing (want a list of strings)")
	}
	list, ok := sv.([]any)
	if !ok {
		return fail("samples", "want a list of strings, got "+typeName(sv))
	}
	if len(list) > MaxSamplesPerRecord {
		return fail("samples", fmt.Sprintf("%d samples; at most %d per prompt (kernel scores compare every pair of samples: %.2g pairs would need %s)",
			len(list), MaxSamplesPerRecord, float64(len(list))*float64(len(list)), fmtBytes(int64(len(list))*int64(len(list))*8)))
	}
	rec.Samples = make([]string, len(list))
	for i, e := range list {
		s, ok := toString(e)
		if !ok {
			return fail(fmt.Sprintf("samples[%d]", i), "want a string, got "+typeName(e))
		}
		if err := d.keepText(line, fmt.Sprintf("samples[%d]", i), s); err != nil {
			return Record{}, err
		}
		rec.Samples[i] = s
	}

	if err := d.embeddings(line, m["embeddings"], &rec); err != nil {
		return Record{}, err
	}
	if err := d.logprobs(line, m, &rec); err != nil {
		return Record{}, err
	}
	rec.Question = question(m)

	switch a := m["answer"].(type) {
	case nil:
	default:
		s, ok := toString(a)
		if !ok {
			return fail("answer", "want a string, got "+typeName(a))
		}
		rec.Answer = &s
	}

	switch r := m["reference"].(type) {
	case nil:
	case []any:
		if len(r) > 0 {
			rec.Reference = make([]string, len(r))
		}
		for i, e := range r {
			s, ok := toString(e)
			if !ok {
				return fail(fmt.Sprintf("reference[%d]", i), "want a string, got "+typeName(e))
			}
			rec.Reference[i] = s
		}
	default:
		s, ok := toString(r)
		if !ok {
			return fail("reference", "want a string or a list of strings, got "+typeName(r))
		}
		rec.Reference = []string{s}
	}

	switch c := m["correct"].(type) {
	case nil:
	case bool:
		rec.Correct = &c
	default:
		return fail("correct", "want true, false or null, got "+typeName(c))
	}

	switch js := m["judge_scores"].(type) {
	case nil:
	case []any:
		if len(js) > 0 {
			rec.JudgeScores = make([]*float64, len(js))
		}
		for i, e := range js {
			if e == nil {
				continue
			}
			f, ok := toFloat(e)
			field := fmt.Sprintf("judge_scores[%d]", i)
			if !ok {
				return fail(field, "want a number or null, got "+typeName(e))
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return fail(field, "is "+fmtNonFinite(f)+" (use null for a missing score)")
			}
			rec.JudgeScores[i] = &f
		}
	default:
		return fail("judge_scores", "want a list of numbers, got "+typeName(js))
	}
	return rec, nil
}

// embeddings validates the optional per-sample vectors: one per sample,
// finite, and of one dimension throughout the file (a kernel between
// vectors of different lengths is meaningless).
func (d *recordDecoder) embeddings(line int, v any, rec *Record) error {
	fail := func(field, msg string) error { return d.src.errf(line, field, msg) }
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return fail("embeddings", "want a list of vectors (one per sample), got "+typeName(v))
	}
	if len(list) == 0 {
		return nil
	}
	emb := make([][]float64, len(list))
	for i, ev := range list {
		vec, ok := ev.([]any)
		if !ok {
			return fail(fmt.Sprintf("embeddings[%d]", i), "want a list of numbers, got "+typeName(ev))
		}
		row := make([]float64, len(vec))
		for j, x := range vec {
			f, ok := toFloat(x)
			field := fmt.Sprintf("embeddings[%d][%d]", i, j)
			if !ok {
				return fail(field, "want a number, got "+typeName(x))
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				msg := "is " + fmtNonFinite(f)
				if n, isNum := x.(json.Number); isNum {
					msg += fmt.Sprintf(" (%s overflows float64)", clip(string(n), 30))
				}
				return fail(field, msg)
			}
			row[j] = f
		}
		if len(row) == 0 {
			return fail(fmt.Sprintf("embeddings[%d]", i), "is an empty vector")
		}
		if i > 0 && len(row) != len(emb[0]) {
			return fail(fmt.Sprintf("embeddings[%d]", i), fmt.Sprintf("has length %d but embeddings[0] has length %d (ragged)", len(row), len(emb[0])))
		}
		emb[i] = row
	}
	if len(emb) != len(rec.Samples) {
		return fail("embeddings", fmt.Sprintf("has %d vectors but samples has %d entries; want one vector per sample", len(emb), len(rec.Samples)))
	}
	dim := len(emb[0])
	if d.dim == 0 {
		d.dim, d.dimLine = dim, line
	} else if dim != d.dim {
		return fail("embeddings", fmt.Sprintf("vectors have dimension %d but those of %s %d have dimension %d", dim, fault.LineUnit(d.src.file), d.dimLine, d.dim))
	}
	rec.Embeddings = emb
	return nil
}

func isSentinel(s string) bool {
	return s == sentNaN || s == sentPosInf || s == sentNegInf
}

// toString accepts a string that is not a NaN/Infinity stand-in.
func toString(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, !isSentinel(s)
	case []byte:
		return string(s), true
	}
	return "", false
}

// toFloat converts any numeric value (and the NaN/Infinity stand-ins) to
// float64. A JSON number too large for float64 becomes ±Inf, which the
// callers then reject with the value's position.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, false
		}
		return f, true
	case string:
		switch x {
		case sentNaN:
			return math.NaN(), true
		case sentPosInf:
			return math.Inf(1), true
		case sentNegInf:
			return math.Inf(-1), true
		}
		return 0, false
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

// numText is the text of a numeric id from Parquet.
func numText(v any) string {
	switch x := v.(type) {
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// typeName names a decoded value's type in JSON terms for messages.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		if isSentinel(x) {
			return x[1:]
		}
		return "a string"
	case []byte:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	if _, ok := toFloat(v); ok {
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}
