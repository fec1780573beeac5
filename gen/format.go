package gen

import "go/format"

func goformat(src []byte) ([]byte, error) { return format.Source(src) }
