package gen

import (
	"go/types"
	"reflect"
	"testing"

	"github.com/gocu-dev/gocu/gen/testdata/kernels/features"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/hist"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/util"
	"github.com/gocu-dev/gocu/kernel"
)

// TestLayoutMatchesRuntime checks that the sizes, alignments and offsets
// the translator writes into the CUDA static_asserts (go/types' gc/amd64
// layout) are the ones the compiled Go program uses. Together with the
// clang compile of the generated sources, which evaluates the asserts, it
// shows that structs cross the host/GPU boundary unchanged.
func TestLayoutMatchesRuntime(t *testing.T) {
	needGo(t)
	sizes := types.SizesFor("gc", "amd64")
	prog, err := load(Config{}, []string{"./testdata/kernels/features", "./testdata/kernels/hist"})
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(path, name string) types.Type {
		for tp := range prog.byTypes {
			if tp.Path() == path {
				return tp.Scope().Lookup(name).Type()
			}
		}
		t.Fatalf("%s.%s not loaded", path, name)
		return nil
	}
	for _, c := range []struct {
		path, name string
		rt         reflect.Type
	}{
		{"github.com/gocu-dev/gocu/gen/testdata/kernels/features", "Pair", reflect.TypeFor[features.Pair]()},
		{"github.com/gocu-dev/gocu/gen/testdata/kernels/features", "Particle", reflect.TypeFor[features.Particle]()},
		{"github.com/gocu-dev/gocu/gen/testdata/kernels/hist", "Stats", reflect.TypeFor[hist.Stats]()},
		{"github.com/gocu-dev/gocu/gen/testdata/kernels/util", "Vec3", reflect.TypeFor[util.Vec3]()},
		{kernelPath, "Dim3", reflect.TypeFor[kernel.Dim3]()},
	} {
		tt := lookup(c.path, c.name)
		if got, want := sizes.Sizeof(tt), int64(c.rt.Size()); got != want {
			t.Errorf("%s: size %d, runtime %d", c.name, got, want)
		}
		if got, want := sizes.Alignof(tt), int64(c.rt.Align()); got != want {
			t.Errorf("%s: align %d, runtime %d", c.name, got, want)
		}
		st := tt.Underlying().(*types.Struct)
		var fields []*types.Var
		for i := 0; i < st.NumFields(); i++ {
			fields = append(fields, st.Field(i))
		}
		offs := sizes.Offsetsof(fields)
		for i := range fields {
			if got, want := offs[i], int64(c.rt.Field(i).Offset); got != want {
				t.Errorf("%s.%s: offset %d, runtime %d", c.name, fields[i].Name(), got, want)
			}
		}
	}
}
