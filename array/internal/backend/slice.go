package backend

import "github.com/gocu-dev/gocu/lowp"

// SliceLen is the length of a host slice of one of the dtypes' Go element
// types, or -1 for anything else. Both backends check copies with it.
func SliceLen(s any) int {
	switch s := s.(type) {
	case []float32:
		return len(s)
	case []float64:
		return len(s)
	case []int32:
		return len(s)
	case []int64:
		return len(s)
	case []uint8:
		return len(s)
	case []bool:
		return len(s)
	case []int8:
		return len(s)
	case []int16:
		return len(s)
	case []uint16:
		return len(s)
	case []uint32:
		return len(s)
	case []uint64:
		return len(s)
	case []lowp.Float16:
		return len(s)
	case []lowp.BFloat16:
		return len(s)
	case []lowp.Float8E4M3:
		return len(s)
	case []lowp.Float8E5M2:
		return len(s)
	}
	return -1
}
