package gpt

import (
	"os"
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// TestMain keeps array's default device on the CPU, where the CPU tests
// build their models: on a machine with a GPU the default would be the
// GPU, and arrays made with array.FromSlice would land there.
func TestMain(m *testing.M) {
	array.SetDefault(array.CPU().Device())
	os.Exit(m.Run())
}
