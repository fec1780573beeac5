package gpt

import (
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TextWriter writes byte tokens (a vocabulary of 256) to an io.Writer as
// valid UTF-8: a character whose bytes arrive in several tokens is written
// once complete, and a byte that starts no valid character becomes
// U+FFFD, as does a control character other than tab, newline and
// carriage return (escape sequences would drive a terminal). A byte model
// may emit any bytes; a terminal gets text.
type TextWriter struct {
	w       io.Writer
	pending []byte
}

// NewTextWriter returns a TextWriter to w.
func NewTextWriter(w io.Writer) *TextWriter { return &TextWriter{w: w} }

const replacement = "\uFFFD"

// WriteToken adds one byte token (0 to 255; others are written as
// U+FFFD).
func (t *TextWriter) WriteToken(tok int) error {
	if tok < 0 || tok > 255 {
		if err := t.Flush(); err != nil {
			return err
		}
		_, err := io.WriteString(t.w, replacement)
		return err
	}
	t.pending = append(t.pending, byte(tok))
	return t.drain(false)
}

// Flush writes what is pending, an incomplete character as U+FFFD.
func (t *TextWriter) Flush() error { return t.drain(true) }

func (t *TextWriter) drain(all bool) error {
	var out []byte
	p := t.pending
	for len(p) > 0 {
		if !all && !utf8.FullRune(p) {
			break // wait for the character's next bytes
		}
		r, n := utf8.DecodeRune(p)
		switch {
		case r == utf8.RuneError && n <= 1:
			out = append(out, replacement...)
			n = 1
		case unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r':
			out = append(out, replacement...)
		default:
			out = append(out, p[:n]...)
		}
		p = p[n:]
	}
	t.pending = append(t.pending[:0], p...)
	if len(out) == 0 {
		return nil
	}
	_, err := t.w.Write(out)
	return err
}

// Text returns byte tokens as valid UTF-8, as a TextWriter writes them.
func Text(tokens []int) string {
	var b strings.Builder
	w := NewTextWriter(&b)
	for _, t := range tokens {
		w.WriteToken(t) // a strings.Builder takes every write
	}
	w.Flush()
	return b.String()
}
