package atomicfile

import (
	"io"
)

// Write creates or replaces path with what write produces. A replaced
// file keeps its permissions; a new one gets 0666 less the process's
// umask, as a file made by os.Create would (os.CreateTemp, which the
// temporary file comes from, would make it private, 0600). On error the
// temporary file is removed and path is untouched.
func Write(path string, write func(io.Writer) error) error {
	var s Set
	if err := s.Add(path, write); err != nil {
		return err
	}
	return s.Commit()
}
