package job

import (
	"encoding/json"

	"github.com/genlens/genlens/internal/fields"
)

// Messages are sentences a result carries for whoever reads its numbers
// (why an AUROC is empty, why an estimate is negative). They name request
// fields in braces, "{holdout_first}", and marshal with each field
// spelled as itself, as the service and the library spell fields; the
// command line renders them with its flags first (Render).
type Messages []string

// Render returns the messages with each braced field spelled by spell.
func (m Messages) Render(spell func(field string) string) Messages {
	if m == nil {
		return nil
	}
	out := make(Messages, len(m))
	for i, s := range m {
		out[i] = fields.Render(s, spell)
	}
	return out
}

// MarshalJSON writes the messages as a list of strings, fields by their
// names.
func (m Messages) MarshalJSON() ([]byte, error) {
	return json.Marshal([]string(m.Render(func(f string) string { return f })))
}
