package job

import (
	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
)

// CSVOptions is the field of the requests that read CSV files: how their
// fields are separated. A file saved by a spreadsheet in a locale with
// decimal commas separates them with ';'; read with the comma it is
// refused with a message that says so (see dataio.ParseSep).
type CSVOptions struct {
	// Sep separates the fields of the CSV inputs: "" is the comma, else
	// one character such as ";" or "|", or "tab".
	Sep string `json:"sep,omitempty"`
}

// ValidateSep checks Sep, as a bad {sep}.
func (o CSVOptions) ValidateSep() error {
	if _, err := dataio.ParseSep(o.Sep); err != nil {
		return &fault.FieldError{Field: "sep", Msg: err.Error()}
	}
	return nil
}

// Separator is the separator for dataio's readers, once ValidateSep has accepted
// it (the comma otherwise).
func (o CSVOptions) Separator() rune {
	if r, err := dataio.ParseSep(o.Sep); err == nil {
		return r
	}
	return ','
}
