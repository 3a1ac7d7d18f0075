package llmproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// The proxy edits the caller's request and the upstream's answer in
// place, byte ranges of the JSON replaced, so that every byte it has no
// reason to touch (key order, spacing, numbers as written) passes as it
// came: decoding and re-encoding would not keep them.

// span is the byte range [start, end) of a JSON value.
type span struct{ start, end int }

// objectSpans returns where the value of each key of the JSON object b
// is; a repeated key gives its last value, as most servers read it.
func objectSpans(b []byte) (map[string]span, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]span{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		out[key] = span{end - len(raw), end}
	}
	return out, nil
}

// arraySpans returns where each element of the JSON array b is.
func arraySpans(b []byte) ([]span, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, errors.New("not a JSON array")
	}
	var out []span
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		out = append(out, span{end - len(raw), end})
	}
	return out, nil
}

// edit is a replacement of the bytes of at by with.
type edit struct {
	at   span
	with []byte
}

// apply returns b with the edits made; they must not overlap.
func apply(b []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(x, y edit) int { return x.at.start - y.at.start })
	out := make([]byte, 0, len(b))
	last := 0
	for _, e := range edits {
		out = append(out, b[last:e.at.start]...)
		out = append(out, e.with...)
		last = e.at.end
	}
	return append(out, b[last:]...)
}

// setKeys returns the JSON object b with each key of kv set to its value
// (JSON text): a key b has gets its value replaced, one it lacks is added
// last, in the order of kv.
func setKeys(b []byte, kv [][2]string) ([]byte, error) {
	spans, err := objectSpans(b)
	if err != nil {
		return nil, err
	}
	var edits []edit
	var add []byte
	for _, e := range kv {
		if s, ok := spans[e[0]]; ok {
			edits = append(edits, edit{s, []byte(e[1])})
			continue
		}
		k, _ := json.Marshal(e[0])
		add = append(append(append(append(add, ','), k...), ':'), e[1]...)
	}
	t := bytes.TrimRight(b, " \t\r\n")
	end := len(t) - 1 // the closing brace
	if len(spans) == 0 && len(add) > 0 {
		add = add[1:] // no comma after "{"
	}
	edits = append(edits, edit{span{end, end}, add})
	return apply(b, edits), nil
}

// blankLogprobs returns the chat completion (or stream chunk) b with the
// "logprobs" of every choice set to null, as the upstream writes them
// when they are not asked for.
func blankLogprobs(b []byte) ([]byte, error) {
	top, err := objectSpans(b)
	if err != nil {
		return nil, err
	}
	cs, ok := top["choices"]
	if !ok || bytes.Equal(b[cs.start:cs.end], []byte("null")) {
		return b, nil
	}
	elems, err := arraySpans(b[cs.start:cs.end])
	if err != nil {
		return nil, fmt.Errorf("choices: %w", err)
	}
	var edits []edit
	for i, e := range elems {
		e = span{cs.start + e.start, cs.start + e.end}
		keys, err := objectSpans(b[e.start:e.end])
		if err != nil {
			return nil, fmt.Errorf("choices[%d]: %w", i, err)
		}
		if lp, ok := keys["logprobs"]; ok {
			edits = append(edits, edit{span{e.start + lp.start, e.start + lp.end}, []byte("null")})
		}
	}
	return apply(b, edits), nil
}
