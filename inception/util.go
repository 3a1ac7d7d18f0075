package inception

import (
	"errors"
	"io/fs"
)

// causeMsg returns the message of err without the path *fs.PathError
// repeats (the InputError names the file already).
func causeMsg(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
