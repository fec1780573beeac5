package frame

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// testDev is the device the tests run on; GOCU_DEVICE chooses another (the
// GPU runs of the same tests).
var testDev *gocu.Device

func TestMain(m *testing.M) {
	name := os.Getenv("GOCU_DEVICE")
	if name == "" {
		name = "cpu"
	}
	d, err := gocu.Open(name)
	if err != nil {
		os.Stderr.WriteString("frame tests: " + err.Error() + "\n")
		os.Exit(1)
	}
	testDev = d
	array.SetDefault(d)
	os.Exit(m.Run())
}

func mustSeries(t testing.TB, name string, data any, valid []bool) *Series {
	t.Helper()
	s, err := NewSeriesValid(testDev, name, data, valid)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustFrame(t testing.TB, cols ...*Series) *Frame {
	t.Helper()
	f, err := New(testDev, cols...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPrint(t *testing.T) {
	f := mustFrame(t,
		mustSeries(t, "id", []int32{1, 22, 3}, nil),
		mustSeries(t, "x", []float64{0.5, 1.25, -3}, []bool{true, true, false}),
		mustSeries(t, "name", []string{"a", "bb", "ccc"}, []bool{true, false, true}),
		mustSeries(t, "ok", []bool{true, false, true}, nil),
	)
	want := "" +
		"   id     x  name     ok\n" +
		"0   1  0.50     a   True\n" +
		"1  22  1.25  <NA>  False\n" +
		"2   3   NaN   ccc   True"
	if got := f.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := f.Head(1).String(); got != "   id    x  name    ok\n0   1  0.5     a  True" {
		t.Errorf("Head(1):\n%s", got)
	}
	if got := f.Tail(1).String(); got != "   id    x  name    ok\n0   3  NaN   ccc  True" {
		t.Errorf("Tail(1):\n%s", got)
	}
}

func TestPrintLong(t *testing.T) {
	v := make([]int64, 100)
	for i := range v {
		v[i] = int64(i * i)
	}
	f := mustFrame(t, mustSeries(t, "sq", v, nil))
	got := f.String()
	lines := strings.Split(got, "\n")
	// pandas 1.5.3 prints the same lines.
	if len(lines) != 14 || lines[0] != "      sq" || lines[6] != "..   ..." || lines[11] != "99  9801" || lines[13] != "[100 rows x 1 columns]" {
		t.Errorf("got\n%s", got)
	}
}

func TestUnknownColumn(t *testing.T) {
	f := mustFrame(t, mustSeries(t, "price", []float64{1}, nil), mustSeries(t, "prize", []float64{1}, nil), mustSeries(t, "qty", []int64{1}, nil))
	_, err := f.Select("prise")
	if !errors.Is(err, ErrColumn) || !strings.Contains(err.Error(), `did you mean "price", "prize"`) {
		t.Errorf("got %v", err)
	}
	_, err = f.Column("zzzzzzz")
	if !errors.Is(err, ErrColumn) || !strings.Contains(err.Error(), `columns: "price", "prize", "qty"`) {
		t.Errorf("got %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	a := mustSeries(t, "a", []int64{1, 2}, nil)
	b := mustSeries(t, "b", []int64{1}, nil)
	if _, err := New(testDev, a, b); !errors.Is(err, ErrLength) {
		t.Errorf("lengths: %v", err)
	}
	if _, err := New(testDev, a, a); !errors.Is(err, ErrColumn) {
		t.Errorf("twice: %v", err)
	}
	if _, err := NewSeries(testDev, "u", []uint16{1}); !errors.Is(err, ErrType) {
		t.Errorf("uint16: %v", err)
	}
	if _, err := NewSeriesValid(testDev, "v", []int64{1, 2}, []bool{true}); !errors.Is(err, ErrLength) {
		t.Errorf("validity: %v", err)
	}
}

func TestCategorical(t *testing.T) {
	s, err := NewCategorical(testDev, "c", []string{"b", "a", "b", "c", "x"}, []bool{true, true, true, true, false})
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Dictionary(); strings.Join(d, ",") != "a,b,c" {
		t.Errorf("dictionary %v", d)
	}
	strs, valid, err := s.Strings()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(strs[:4], ",") != "b,a,b,c" || valid[4] {
		t.Errorf("strings %v %v", strs, valid)
	}
}
