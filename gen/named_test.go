package gen

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// SetMaxNReg's count and direction are immediates in PTX: gocu gen
// rejects other arguments at their position.
var namedErrorCases = []errorCase{
	{name: "count variable", body: "kernel.SetMaxNReg(t, /*ERR*/n, true)",
		msg: "a SetMaxNReg count that is not a constant from 24 to 256 is not supported in a kernel: PTX setmaxnreg takes an immediate multiple of 8 from 24 to 256: write a constant"},
	{name: "count range", body: "kernel.SetMaxNReg(t, /*ERR*/16, false)",
		msg: "a SetMaxNReg count that is not a constant from 24 to 256 is not supported in a kernel: PTX setmaxnreg takes an immediate multiple of 8 from 24 to 256: write a constant"},
	{name: "count multiple", body: "kernel.SetMaxNReg(t, /*ERR*/100, true)",
		msg: "a SetMaxNReg count of 100, not a multiple of 8 is not supported in a kernel: round the count to a multiple of 8"},
	{name: "inc variable", body: "kernel.SetMaxNReg(t, 64, /*ERR*/n > 0)",
		msg: "a SetMaxNReg inc that is not a constant is not supported in a kernel: PTX has setmaxnreg.inc and setmaxnreg.dec: write true or false"},
}

func TestSetMaxNRegRejected(t *testing.T) {
	for _, c := range namedErrorCases {
		t.Run(c.name, func(t *testing.T) {
			src := kernelSrc("", "x []float32, n int32", c.body)
			p, err := translate(t, strings.Replace(src, "/*ERR*/", "", 1))
			if err == nil {
				t.Fatalf("translated without error:\n%s", cbody(p))
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("not a translation error: %v", err)
			}
			i := strings.Index(src, "/*ERR*/")
			line := strings.Count(src[:i], "\n") + 1
			col := i - strings.LastIndex(src[:i], "\n")
			want := fmt.Sprintf("k.go:%d:%d: %s", line, col, c.msg)
			for _, d := range e.Diagnostics {
				if d.String() == want {
					return
				}
			}
			t.Errorf("diagnostics\n%v\ndo not include\n%s", err, want)
		})
	}
}

// TestNamedBarrierTranslates: variable ids and counts are fine (bar.sync
// takes registers).
func TestNamedBarrierTranslates(t *testing.T) {
	p, err := translate(t, kernelSrc("", "x []float32, n int32", "kernel.BarSync(t, n, 128)\nkernel.BarArrive(t, 2, n*32)"))
	if err != nil {
		t.Fatal(err)
	}
	body := cbody(p)
	for _, want := range []string{"gocu_bar_sync(n, 128);", "gocu_bar_arrive(2, (int)((unsigned int)n * 32u));"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
}
