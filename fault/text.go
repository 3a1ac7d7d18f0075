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
// message: it keeps the text on one line and harmless for a terminal, a
// log or a page, whatever bytes were smuggled in. Every rune Go does not
// call printable (unicode.IsPrint: control characters such as newlines,
// NUL and escape sequences, format characters such as the bidirectional
// overrides that reorder what a reader sees, spaces other than ASCII's)
// is escaped as Go would quote it (\n, \x1b, \u202e), invalid UTF-8 as
// \xff, and the result is cut at max runes, saying how many bytes were
// left out. Quoting a value inside a message (%q) is as strict; cutting
// stored data (an answer kept for the record) is not cleaning.
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
		case !unicode.IsPrint(r):
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
