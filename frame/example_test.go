package frame_test

import (
	"bytes"
	"fmt"
	"log"
	"math/rand/v2"
	"strconv"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/frame"
)

// Example generates a small db-benchmark-like table, writes it as Parquet,
// reads it back, filters, groups, joins and prints.
func Example() {
	dev := gocu.MustOpen("cpu") // or gocu.Default(): the GPU when there is one
	r := rand.New(rand.NewPCG(1, 2))
	n := 1000
	id1, v1, v3 := make([]int32, n), make([]int64, n), make([]float64, n)
	id4 := make([]string, n)
	for i := range n {
		id1[i] = int32(1 + r.IntN(4))
		id4[i] = "id" + strconv.Itoa(int(id1[i]))
		v1[i] = int64(1 + r.IntN(5))
		v3[i] = float64(r.IntN(10000)) / 100
	}
	cols := []*frame.Series{}
	for _, c := range []struct {
		name string
		data any
	}{{"id1", id1}, {"id4", id4}, {"v1", v1}, {"v3", v3}} {
		s, err := frame.NewSeries(dev, c.name, c.data)
		if err != nil {
			log.Fatal(err)
		}
		cols = append(cols, s)
	}
	f, err := frame.New(dev, cols...)
	if err != nil {
		log.Fatal(err)
	}
	var file bytes.Buffer
	if err := f.WriteParquet(&file); err != nil {
		log.Fatal(err)
	}

	x, err := frame.ReadParquet(dev, bytes.NewReader(file.Bytes()))
	if err != nil {
		log.Fatal(err)
	}
	big, err := x.Filter(frame.Col("v3").Gt(50))
	if err != nil {
		log.Fatal(err)
	}
	g, err := big.GroupBy("id4").Agg(frame.Sum("v1"), frame.Mean("v3"), frame.Count("v3").Named("n"))
	if err != nil {
		log.Fatal(err)
	}
	names, _ := frame.NewSeries(dev, "id4", []string{"id1", "id2", "id3"})
	labels, _ := frame.NewSeries(dev, "label", []string{"one", "two", "three"})
	lookup, _ := frame.New(dev, names, labels)
	out, err := g.Join(lookup, frame.Left, "id4")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d rows with v3 > 50 of %d\n%v\n", big.Len(), x.Len(), out)
	// Output:
	// 475 rows with v3 > 50 of 1000
	//    id4   v1         v3    n  label
	// 0  id1  418  75.240000  132    one
	// 1  id2  355  75.541034  116    two
	// 2  id3  332  76.279730  111  three
	// 3  id4  368  75.782672  116   <NA>
}
