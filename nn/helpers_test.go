package nn_test

import (
	"math"
	"os"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/gputest"
)

func TestMain(m *testing.M) {
	if os.Getenv("GOCU_DEVICE") == "" {
		array.SetDefault(gocu.MustOpen("cpu"))
	}
	os.Exit(m.Run())
}

var gpuOnce = sync.OnceValues(func() (*array.Maker, error) {
	if err := gocu.GPUUsable(); err != nil {
		return nil, err
	}
	return array.GPU(0)
})

func testGPU(t testing.TB) *array.Maker {
	t.Helper()
	g, err := gpuOnce()
	gputest.Need(t, err)
	return g
}

func f64(t testing.TB, a *array.Array) []float64 {
	t.Helper()
	v, err := a.AsType(array.Float64).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// near fails unless |got-want| <= tol·max(1, |want|) everywhere.
func near(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	worst, at := 0.0, -1
	for i := range got {
		d := math.Abs(got[i]-want[i]) / math.Max(1, math.Abs(want[i]))
		if d > worst || math.IsNaN(d) {
			worst, at = d, i
			if math.IsNaN(d) {
				worst = math.Inf(1)
			}
		}
	}
	if worst > tol {
		t.Fatalf("%s[%d] = %v, want %v (relative difference %.3g > %.3g)", what, at, got[at], want[at], worst, tol)
	}
}
