package dist

import (
	"bytes"
	"encoding/gob"
	"errors"
	"io"
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// FuzzHubRound feeds the hub the requests of up to four ranks, decoded
// from arbitrary bytes as the hub decodes them from its connections: a
// garbled or hostile rank must get an error reply, never crash the hub.
func FuzzHubRound(f *testing.F) {
	cpu := array.CPU()
	npy := func(v []float32) []byte {
		x := array.FromSliceOn(cpu.Device(), v)
		defer x.Close()
		b, err := encodeNPY(x)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	seed := func(qs ...request) {
		var b bytes.Buffer
		enc := gob.NewEncoder(&b)
		for _, q := range qs {
			if err := enc.Encode(q); err != nil {
				f.Fatal(err)
			}
		}
		f.Add(b.Bytes())
	}
	a, c := npy([]float32{1, 2, 3, 4}), npy([]float32{5, 6, 7, 8})
	for _, kind := range []string{"allreduce", "reducescatter", "allgather"} {
		seed(request{Kind: kind, Op: Sum, DType: array.Float32, Shape: []int{4}, Data: a},
			request{Kind: kind, Op: Sum, DType: array.Float32, Shape: []int{4}, Data: c})
	}
	seed(request{Kind: "broadcast", Root: 1, DType: array.Float32, Shape: []int{4}, Data: a},
		request{Kind: "broadcast", Root: 1, DType: array.Float32, Shape: []int{4}, Data: c})
	seed(request{Kind: "alltoall", DType: array.Float32, Parts: [][]byte{a, c}},
		request{Kind: "alltoall", DType: array.Float32, Parts: [][]byte{c, a}})
	seed(request{Kind: "close"}, request{Kind: "close"})
	seed(request{Kind: "allreduce", Op: Max, DType: array.Int32, Shape: []int{4}, Data: a},
		request{Kind: "allreduce", Op: Max, DType: array.Int32, Shape: []int{4}, Data: []byte("\x93NUMPY")})
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := gob.NewDecoder(bytes.NewReader(data))
		var reqs []request
		for len(reqs) < 4 {
			var q request
			if err := dec.Decode(&q); err != nil {
				if errors.Is(err, io.EOF) || len(reqs) > 0 {
					break
				}
				return // the hub drops a rank whose bytes do not decode
			}
			reqs = append(reqs, q)
		}
		if len(reqs) == 0 {
			return
		}
		rep := round(reqs)
		for r := range reqs {
			got := replyFor(reqs, rep, r)
			if rep.Err == "" && reqs[0].Kind == "alltoall" && len(got.Parts) != len(reqs) {
				t.Fatalf("rank %d got %d pieces from %d ranks", r, len(got.Parts), len(reqs))
			}
		}
	})
}
