package signin

import (
	"unicode"

	"github.com/genlens/genlens/fault"
)

// MinTokenLen is the fewest characters other than spaces a bearer token
// may have: the server refuses a shorter one (" " was once accepted, and a short
// token is guessed).
const MinTokenLen = 16

// CheckToken returns a *fault.FieldError ({token}) saying why tok is not a
// usable bearer token: fewer than MinTokenLen characters other than white
// space.
func CheckToken(tok string) error {
	n := 0
	for _, r := range tok {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	if n < MinTokenLen {
		return fault.Fieldf("token", "the bearer token has %d characters other than spaces; want at least %d (e.g. openssl rand -hex 16)", n, MinTokenLen)
	}
	return nil
}
