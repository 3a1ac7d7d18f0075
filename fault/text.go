package fault

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable is the one cleaning of untrusted text (a field of a file, a
// server's error message, a name a caller chose) before it is part of a
// message: it keeps the text on one line and harmless for a terminal or a
// log, whatever bytes were smuggled in: control characters
// (newlines, NUL, escape sequences) and invalid UTF-8 are escaped, and
// the result is cut at max runes.
func Printable(msg string, max int) string {
	var b strings.Builder
	n := 0
	for i, r := range msg {
		if n == max {
			b.WriteString(fmt.Sprintf("... (%d more bytes)", len(msg)-i))
			break
		}
		n++
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(msg[i:], "\uFFFD"):
			b.WriteString(fmt.Sprintf(`\x%02x`, msg[i]))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsControl(r):
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
