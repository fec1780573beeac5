package philox

import (
	"math"
	"testing"
)

// Known-answer vectors from Random123's kat_vectors (philox4x32, 7 and 10
// rounds): counter, key, expected output.
var kat = []struct {
	rounds int
	ctr    [4]uint32
	key    [2]uint32
	want   [4]uint32
}{
	{7, [4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48}},
	{7, [4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662}},
	{7, [4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a}},
	{10, [4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
	{10, [4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
	{10, [4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
}

func TestKnownAnswers(t *testing.T) {
	for _, c := range kat {
		got := rounds(c.ctr, c.key, c.rounds)
		if got != c.want {
			t.Errorf("philox4x32-%d(%08x, %08x) = %08x, want %08x", c.rounds, c.ctr, c.key, got, c.want)
		}
		if c.rounds == 10 && Block(c.ctr, c.key) != c.want {
			t.Errorf("Block disagrees with rounds(10)")
		}
	}
}

func TestLogAccuracy(t *testing.T) {
	worst := 0.0
	for i := 1; i <= 200000; i++ {
		u := U64Open(uint32(i*2654435761), uint32(i*40503))
		got, want := Log(u), math.Log(u)
		if d := math.Abs(got-want) / math.Max(math.Abs(want), 1e-300); d > worst && want != 0 {
			worst = d
		}
	}
	for _, u := range []float64{1, 0.5, 1.1102230246251565e-16, 0.7071067811865476, 0.999999999} {
		if d := math.Abs(Log(u) - math.Log(u)); d > 4e-16*math.Max(1, math.Abs(math.Log(u))) {
			t.Errorf("Log(%v) = %v, want %v", u, Log(u), math.Log(u))
		}
	}
	if worst > 1e-15 {
		t.Errorf("worst relative error of Log %g", worst)
	}
}

func TestSinCosAccuracy(t *testing.T) {
	worst := 0.0
	for i := 0; i < 200000; i++ {
		v := U64(uint32(i*2654435761), uint32(i*97))
		s, c := SinCos2Pi(v)
		ws, wc := math.Sincos(2 * math.Pi * v)
		worst = math.Max(worst, math.Max(math.Abs(s-ws), math.Abs(c-wc)))
	}
	for _, v := range []float64{0, 0.125, 0.25, 0.375, 0.5, 0.75, 0.9999999} {
		s, c := SinCos2Pi(v)
		ws, wc := math.Sincos(2 * math.Pi * v)
		if math.Abs(s-ws) > 1e-15 || math.Abs(c-wc) > 1e-15 {
			t.Errorf("SinCos2Pi(%v) = %v, %v, want %v, %v", v, s, c, ws, wc)
		}
	}
	if worst > 2e-15 {
		t.Errorf("worst absolute error of SinCos2Pi %g", worst)
	}
}

func TestUniformRange(t *testing.T) {
	f32 := make([]float32, 100003)
	Uniform32(f32, 7, 0, -2, 3)
	f64 := make([]float64, 100003)
	Uniform64(f64, 7, 0, -2, 3)
	var s32, s64 float64
	for i := range f32 {
		if f32[i] < -2 || f32[i] >= 3 || f64[i] < -2 || f64[i] >= 3 {
			t.Fatalf("value %d out of [-2,3): %v %v", i, f32[i], f64[i])
		}
		s32 += float64(f32[i])
		s64 += f64[i]
	}
	n := float64(len(f32))
	// mean 0.5, sd of the mean 5/sqrt(12 n) ~ 0.0046: allow 5 sd.
	if math.Abs(s32/n-0.5) > 0.023 || math.Abs(s64/n-0.5) > 0.023 {
		t.Errorf("means %v %v, want 0.5", s32/n, s64/n)
	}
	// The clamp keeps hi out even when rounding would reach it.
	tiny := make([]float32, 64)
	Uniform32(tiny, 1, 0, 1, math.Nextafter(1, 2))
	for _, v := range tiny {
		if v != 1 {
			t.Fatalf("uniform on [1, 1+ulp) gave %v", v)
		}
	}
}

func TestNormalMoments(t *testing.T) {
	x := make([]float64, 200001)
	Normal64(x, 99, 12345, 1, 2)
	var m, v float64
	for _, e := range x {
		m += e
	}
	m /= float64(len(x))
	for _, e := range x {
		v += (e - m) * (e - m)
	}
	v /= float64(len(x))
	if math.Abs(m-1) > 0.03 || math.Abs(v-4) > 0.08 {
		t.Errorf("mean %v var %v, want 1 and 4", m, v)
	}
	y := make([]float32, len(x))
	Normal32(y, 99, 12345, 1, 2)
	for i := range y {
		if y[i] != float32(x[i]) {
			t.Fatalf("float32 normal %d = %v, want float32 of %v", i, y[i], x[i])
		}
	}
}

// A fill that starts mid-stream equals the tail of a fill from the start.
func TestCounterOffsets(t *testing.T) {
	a := make([]float32, 40)
	Uniform32(a, 5, 0, 0, 1)
	b := make([]float32, 20)
	Uniform32(b, 5, 5, 0, 1)
	for i := range b {
		if a[20+i] != b[i] {
			t.Fatalf("offset fill differs at %d", i)
		}
	}
	if BlocksFor(false, false, 41) != 11 || BlocksFor(true, false, 41) != 21 || BlocksFor(false, true, 3) != 2 {
		t.Errorf("BlocksFor wrong")
	}
}
