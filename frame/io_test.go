package frame

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	aarray "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sample returns a frame with every column kind and nulls.
func sample(t testing.TB) *Frame {
	t.Helper()
	ts := []time.Time{time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC), time.Unix(0, 5).UTC(), time.Unix(1e9, 0).UTC()}
	cat, err := NewCategorical(testDev, "c", []string{"x", "y", "x"}, []bool{true, false, true})
	if err != nil {
		t.Fatal(err)
	}
	return mustFrame(t,
		mustSeries(t, "i64", []int64{-1, 1 << 40, 3}, []bool{true, true, false}),
		mustSeries(t, "i32", []int32{7, 8, 9}, nil),
		mustSeries(t, "f64", []float64{0.25, math.NaN(), -2}, nil),
		mustSeries(t, "f32", []float32{1.5, 2, 3}, []bool{false, true, true}),
		mustSeries(t, "b", []bool{true, false, true}, nil),
		mustSeries(t, "s", []string{"héllo", "", "z"}, []bool{true, true, false}),
		mustSeries(t, "ts", ts, nil),
		cat,
	)
}

func sameFrame(t *testing.T, got, want *Frame) {
	t.Helper()
	if g, w := got.String(), want.String(); g != w {
		t.Errorf("got\n%s\nwant\n%s", g, w)
	}
	for i, c := range want.cols {
		if got.cols[i].kind != c.kind || got.cols[i].DType() != c.DType() {
			t.Errorf("column %q: got %v %v, want %v %v", c.name, got.cols[i].kind, got.cols[i].DType(), c.kind, c.DType())
		}
	}
}

func TestParquetRoundTrip(t *testing.T) {
	f := sample(t)
	var buf bytes.Buffer
	if err := f.WriteParquet(&buf); err != nil {
		t.Fatal(err)
	}
	g, err := ReadParquet(testDev, bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	sameFrame(t, g, f)
}

func TestIPCRoundTrip(t *testing.T) {
	f := sample(t)
	var buf bytes.Buffer
	if err := f.WriteIPC(&buf); err != nil {
		t.Fatal(err)
	}
	g, err := ReadIPC(testDev, bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	sameFrame(t, g, f)
}

func TestCorruptFiles(t *testing.T) {
	f := sample(t)
	var pq, ipc bytes.Buffer
	if err := f.WriteParquet(&pq); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteIPC(&ipc); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 4, 20, pq.Len() / 2, pq.Len() - 3} {
		if _, err := ReadParquet(testDev, bytes.NewReader(pq.Bytes()[:n])); !errors.Is(err, ErrFormat) {
			t.Errorf("Parquet cut at %d: %v", n, err)
		}
	}
	for _, n := range []int{0, 4, ipc.Len() / 2} {
		if _, err := ReadIPC(testDev, bytes.NewReader(ipc.Bytes()[:n])); !errors.Is(err, ErrFormat) {
			t.Errorf("IPC cut at %d: %v", n, err)
		}
	}
}

func TestReadCSV(t *testing.T) {
	in := "a,b,c,d,e\n1,2.5,x,True,\n2,,y,False,\n,3,,true,\n4,1e3,7,,\n"
	f, err := ReadCSV(testDev, strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"      a       b     c      d    e\n" +
		"0     1     2.5     x   True  NaN\n" +
		"1     2     NaN     y  False  NaN\n" +
		"2  <NA>     3.0  <NA>   True  NaN\n" +
		"3     4  1000.0     7   <NA>  NaN"
	if got := f.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	kinds := []Kind{Number, Number, String, Number, Number}
	for i, c := range f.cols {
		if c.kind != kinds[i] {
			t.Errorf("column %q: %v", c.name, c.kind)
		}
	}
	// Widening from numbers to strings keeps the numbers' text.
	f, err = ReadCSV(testDev, strings.NewReader("x\n1\n2.5\nz\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := f.cols[0].Strings()
	if strings.Join(s, ",") != "1,2.5,z" {
		t.Errorf("widened: %v", s)
	}
}

func TestReadCSVErrors(t *testing.T) {
	cases := []struct {
		in, want string
		opt      *CSVOptions
	}{
		{"a,b\n1,2\n3\n", "row 2 (line 3): 1 fields, the header has 2", nil},
		{"a,b\n1,2\n3,\"x\"y\n", "row 2 (line 3, byte 5)", nil},
		{"a,b\n1,2\n3,x\n", `row 2 (line 3), column "b": cannot parse "x" as int64`, &CSVOptions{Types: map[string]string{"b": "int64"}}},
		{"a,b\n1,x\n", `no column "c"`, &CSVOptions{Types: map[string]string{"c": "int64"}}},
		{"", "no header row", nil},
		{"a,a\n1,2\n", "appears twice", nil},
	}
	for _, c := range cases {
		_, err := ReadCSV(testDev, strings.NewReader(c.in), c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.in, err, c.want)
		}
	}
}

func TestReadCSVTypes(t *testing.T) {
	f, err := ReadCSV(testDev, strings.NewReader("k;v;w\nb;1;2\na;2;3\nb;3;\n"), &CSVOptions{Comma: ';', Types: map[string]string{"k": "category", "v": "float32", "w": "int32"}})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := f.Column("k")
	v, _ := f.Column("v")
	w, _ := f.Column("w")
	if k.Kind() != Categorical || strings.Join(k.Dictionary(), ",") != "a,b" || v.DType().String() != "float32" || w.DType().String() != "int32" {
		t.Errorf("got %v %v %v %v", k.Kind(), k.Dictionary(), v.DType(), w.DType())
	}
	if n, _ := w.NullCount(); n != 1 {
		t.Errorf("nulls %d", n)
	}
}

func FuzzReadParquet(f *testing.F) {
	var buf bytes.Buffer
	if err := sample(f).WriteParquet(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := ReadParquet(testDev, bytes.NewReader(data))
		if err == nil {
			_ = fr.String()
		} else if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrType) {
			t.Fatalf("error of an unexpected kind: %v", err)
		}
	})
}

func FuzzReadIPC(f *testing.F) {
	var buf bytes.Buffer
	if err := sample(f).WriteIPC(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("ARROW1\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := ReadIPC(testDev, bytes.NewReader(data))
		if err == nil {
			_ = fr.String()
		} else if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrType) {
			t.Fatalf("error of an unexpected kind: %v", err)
		}
	})
}

func FuzzReadCSV(f *testing.F) {
	f.Add("a,b\n1,2\n,x\n")
	f.Add("a\n\"\n")
	f.Fuzz(func(t *testing.T, data string) {
		fr, err := ReadCSV(testDev, strings.NewReader(data), nil)
		if err == nil {
			_ = fr.String()
		}
	})
}

// TestCorruptSweep flips every byte of small Parquet and IPC files in
// turn: each read returns a frame or an error, never a crash.
func TestCorruptSweep(t *testing.T) {
	f := sample(t).Select
	g, _ := f("i64", "f64", "s", "c")
	var pq, ipc bytes.Buffer
	rec, err := g.Record()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	tbl := aarray.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	// Row groups of 2 rows: the groups decode in parallel.
	if err := pqarrow.WriteTable(tbl, &pq, 2, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteIPC(&ipc); err != nil {
		t.Fatal(err)
	}
	sweep := func(name string, data []byte, read func([]byte) (*Frame, error)) {
		bad := 0
		for k := range 2 * len(data) {
			i := k % len(data)
			d := bytes.Clone(data)
			d[i] ^= []byte{0x5a, 0xff}[k/len(data)]
			fr, err := read(d)
			if err != nil {
				bad++
				if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrType) {
					t.Errorf("%s byte %d: error of an unexpected kind: %v", name, i, err)
				}
				continue
			}
			_ = fr.String()
		}
		t.Logf("%s: %d of %d corruptions detected", name, bad, 2*len(data))
	}
	sweep("parquet", pq.Bytes(), func(d []byte) (*Frame, error) { return ReadParquet(testDev, bytes.NewReader(d)) })
	sweep("ipc", ipc.Bytes(), func(d []byte) (*Frame, error) { return ReadIPC(testDev, bytes.NewReader(d)) })
}

func TestReadIPCFile(t *testing.T) {
	f := sample(t)
	rec, err := f.Record()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := ReadIPC(testDev, &buf)
	if err != nil {
		t.Fatal(err)
	}
	sameFrame(t, g, f)
}

func TestWriteParquetLeavesFileOpen(t *testing.T) {
	fh, err := os.Create(filepath.Join(t.TempDir(), "x.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sample(t).WriteParquet(fh); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Errorf("the file was closed: %v", err)
	}
}

func TestCSVRoundTrip(t *testing.T) {
	f, err := sample(t).Drop("ts", "f32")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	want := "i64,i32,f64,b,s,c\n-1,7,0.25,True,héllo,x\n1099511627776,8,,False,,\n,9,-2.0,True,,x\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	g, err := ReadCSV(testDev, &buf, &CSVOptions{Types: map[string]string{"s": "string", "c": "category"}})
	if err != nil {
		t.Fatal(err)
	}
	// CSV cannot tell an empty string from a null, nor NaN from null.
	want = "" +
		"             i64  i32    f64      b      s     c\n" +
		"0             -1    7   0.25   True  héllo     x\n" +
		"1  1099511627776    8    NaN  False   <NA>  <NA>\n" +
		"2           <NA>    9  -2.00   True   <NA>     x"
	if got := g.String(); got != want {
		t.Errorf("read back:\n%s", got)
	}
}

// TestParquetStringsAsDictionary reads a file without a stored Arrow
// schema, as other writers make: its strings become categoricals.
func TestParquetStringsAsDictionary(t *testing.T) {
	f := mustFrame(t, mustSeries(t, "s", []string{"b", "a", "b", "c"}, []bool{true, true, false, true}),
		mustSeries(t, "v", []int64{1, 2, 3, 4}, nil))
	rec, err := f.Record()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	tbl := aarray.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(tbl, &buf, 2, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	g, err := ReadParquet(testDev, bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	s := must(g.Column("s"))
	if s.Kind() != Categorical {
		t.Errorf("kind %v", s.Kind())
	}
	if got := g.String(); got != f.String() {
		t.Errorf("got\n%s\nwant\n%s", got, f)
	}
}

// TestReadCSVPieces reads CSV in parallel pieces and in one piece: the
// types widen across pieces and errors name the row of the whole file.
func TestReadCSVPieces(t *testing.T) {
	var b strings.Builder
	b.WriteString("i,f,bs,nulls,s\n")
	n := 4000
	for i := range n {
		f := strconv.Itoa(i) // ints in the first half, floats after
		if i >= n/2 {
			f += ".5"
		}
		bs := "True" // booleans, then a number: strings
		if i == n-1 {
			bs = "7"
		}
		nulls := "" // null, then numbers in the last rows only
		if i > n-10 {
			nulls = "1.25"
		}
		fmt.Fprintf(&b, "%d,%s,%s,%s,w%d\n", i, f, bs, nulls, i%7)
	}
	in := b.String()
	defer func(v int) { csvSplitMin = v }(csvSplitMin)
	csvSplitMin = 1 << 40
	one, err := ReadCSV(testDev, strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	csvSplitMin = 0
	pieces, err := ReadCSV(testDev, strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, pieces, one)
	for i, c := range one.cols {
		if pieces.cols[i].kind != c.kind || pieces.cols[i].DType() != c.DType() {
			t.Errorf("column %q: %v %v in pieces, %v %v in one", c.name, pieces.cols[i].kind, pieces.cols[i].DType(), c.kind, c.DType())
		}
	}
	bad := strings.Replace(in, "3500,3500.5,", "3500,3500.5,x,", 1)
	_, err = ReadCSV(testDev, strings.NewReader(bad), nil)
	if err == nil || !strings.Contains(err.Error(), "row 3501 (line 3502): 6 fields, the header has 5") {
		t.Errorf("got %v", err)
	}
	bad = strings.Replace(in, "3600,3600.5,", "3600,abc,", 1)
	_, err = ReadCSV(testDev, strings.NewReader(bad), &CSVOptions{Types: map[string]string{"f": "float64"}})
	if err == nil || !strings.Contains(err.Error(), `row 3601 (line 3602), column "f": cannot parse "abc" as float64`) {
		t.Errorf("got %v", err)
	}
}
