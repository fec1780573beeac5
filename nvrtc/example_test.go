package nvrtc_test

import (
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/gocu-dev/gocu/nvrtc"
)

// Compile a kernel for the GPU at hand (compute capability 9.0 here).
func ExampleCompile() {
	src := `extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}`
	res, err := nvrtc.Compile(src, nvrtc.Options{Arch: nvrtc.SM(9, 0)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Format, len(res.Code) > 0) // res.Code goes to cuModuleLoadData
}

// Template kernels are looked up by their mangled names.
func ExampleOptions_nameExpressions() {
	src := `template <typename T> __global__ void fill(T* x, T v) { x[threadIdx.x] = v; }`
	res, err := nvrtc.Compile(src, nvrtc.Options{
		Arch:            "sm_90",
		NameExpressions: []string{"fill<float>", "fill<double>"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Lowered["fill<float>"]) // _Z4fillIfEvPT_S0_
}

// A compile error shows the offending line, like a compiler.
func ExampleCompileError() {
	src := "extern \"C\" __global__ void k(float* x) {\n    x[0] = y;\n}\n"
	_, err := nvrtc.Compile(src, nvrtc.Options{Arch: "sm_90"})
	var ce *nvrtc.CompileError
	if errors.As(err, &ce) {
		d := ce.Diagnostics[0]
		fmt.Printf("%s:%d: %s\n%s\n", d.File, d.Line, d.Message, d.Source)
	}
}

// ParseLog turns NVRTC's log into diagnostics with their source lines.
func ExampleParseLog() {
	src := "extern \"C\" __global__ void k(float* x) {\n    x[0] = y;\n}\n"
	log := "kernel.cu(2): error: identifier \"y\" is undefined\n      x[0] = y;\n             ^\n\n1 error detected in the compilation of \"kernel.cu\".\n"
	for _, d := range nvrtc.ParseLog(log, map[string]string{"kernel.cu": src}) {
		fmt.Print(d.String())
	}
	// Output:
	// kernel.cu:2:12: error: identifier "y" is undefined
	//  2 |     x[0] = y;
	//    |            ^
}

func ExampleSM() {
	fmt.Println(nvrtc.SM(9, 0), nvrtc.Compute(12, 0))
	// Output: sm_90 compute_120
}

// upper is a stand-in compiler: a Cache works with any Compiler.
type upper struct{ calls int }

func (u *upper) ID() (string, error) { return "upper 1.0", nil }

func (u *upper) Compile(src string, opts nvrtc.Options) (*nvrtc.Result, error) {
	u.calls++
	return &nvrtc.Result{Code: []byte(strings.ToUpper(src)), Format: nvrtc.CUBIN}, nil
}

// The second compilation of the same inputs is a verified disk read.
func ExampleCache() {
	dir, cleanup := tempDir()
	defer cleanup()
	comp := &upper{}
	cache, err := nvrtc.NewCache(nvrtc.CacheConfig{Dir: dir, Driver: "13000", Compiler: comp, Disabled: false})
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		res, err := cache.Compile("kernel source", nvrtc.Options{Arch: "sm_90"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(res.Code), res.Cached)
	}
	info, _ := cache.Info()
	fmt.Println(comp.calls, "compilation,", info.Entries, "entry")
	// Output:
	// KERNEL SOURCE false
	// KERNEL SOURCE true
	// 1 compilation, 1 entry
}
