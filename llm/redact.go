package llm

import (
	"bytes"
	"strings"
)

// redacted replaces a secret in text that leaves the process.
const redacted = "[redacted]"

// Redact returns s with every occurrence of each non-empty secret
// replaced by "[redacted]": an upstream that echoes the Authorization
// header in an error must not put the key into what its callers read.
func Redact(s string, secrets []string) string {
	for _, k := range secrets {
		if k != "" && strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, redacted)
		}
	}
	return s
}

// RedactBytes is Redact of a byte slice; b itself is returned when it
// holds no secret.
func RedactBytes(b []byte, secrets []string) []byte {
	for _, k := range secrets {
		if k != "" && bytes.Contains(b, []byte(k)) {
			b = bytes.ReplaceAll(b, []byte(k), []byte(redacted))
		}
	}
	return b
}
