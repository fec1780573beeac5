// Command gray-array converts an RGB image to grayscale twice and checks
// that both give the same bytes:
//
//   - as one array expression over the planar (CHW) uint8 image, on the
//     default array device (a GPU when there is one, else all CPU cores):
//
//     gray := R.AsType(F32).Mul(0.2989).Add(G.AsType(F32).Mul(0.5870)).Add(B.AsType(F32).Mul(0.1140)).AsType(Uint8)
//
//     which fuses into a single pass (one generated kernel on a GPU);
//
//   - with the hand-written lecture kernel lecture.Gray (internal/lecture) on the
//     default gocu device: the CPU simulator without a GPU, or, on a GPU,
//     the same kernel as CUDA C compiled with NVRTC.
//
// Both compute 0.2989·r + 0.5870·g + 0.1140·b in float32 in that order and
// truncate, with no fused multiply-add (Go does not contract on amd64, the
// array backends compile with --fmad=false, and so does the kernel here),
// so the outputs are identical, not just close.
//
//	go run ./examples/gray-array [-width 1024] [-height 768] [-in photo.png] [-out gray.png]
package main

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // -in decodes JPEG too
	"image/png"
	"log"
	"os"
	"strings"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// grayExpr is the whole conversion as one array expression over a
// (3, H, W) uint8 array.
func grayExpr(chw *array.Array) *array.Array {
	ch := func(c int) *array.Array { return chw.Slice(array.Idx(c)).AsType(array.Float32) }
	return ch(0).Mul(0.2989).Add(ch(1).Mul(0.5870)).Add(ch(2).Mul(0.1140)).AsType(array.Uint8)
}

// grayCUDA is lecture.Gray written in CUDA C, for a GPU: the same
// arithmetic, statement for statement. (gocu gen writes this translation
// and a typed launcher from the Go source; this example keeps it by hand so
// that it runs with the runtime alone.)
const grayCUDA = `
extern "C" __global__ void gray(const unsigned char* rgb, unsigned char* gray, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float r = (float)rgb[i], g = (float)rgb[i + n], b = (float)rgb[i + 2 * n];
		gray[i] = (unsigned char)(0.2989f * r + 0.5870f * g + 0.1140f * b);
	}
}
`

func main() {
	w := flag.Int("width", 1024, "width of the generated image")
	h := flag.Int("height", 768, "height of the generated image")
	in := flag.String("in", "", "PNG or JPEG image to convert instead of a generated one")
	out := flag.String("out", "", "write the grayscale image to this PNG file")
	flag.Parse()

	img := image.Image(testImage(*w, *h))
	if *in != "" {
		f, err := os.Open(*in)
		if err != nil {
			log.Fatal(err)
		}
		img, _, err = image.Decode(f)
		f.Close()
		if err != nil {
			log.Fatal(err)
		}
	}
	b := img.Bounds()
	n := b.Dx() * b.Dy()

	// The array expression on the default array device.
	dev := array.Default()
	chw := array.FromImage(img, array.CHW, 3)
	if err := chw.Err(); err != nil {
		log.Fatal(err)
	}
	warm := grayExpr(chw).Eval() // compiles the kernel on a GPU
	if err := dev.Sync(); err != nil {
		log.Fatal(err)
	}
	warm.Close()
	t0 := time.Now()
	g := grayExpr(chw).Eval()
	if err := dev.Sync(); err != nil {
		log.Fatal(err)
	}
	tArray := time.Since(t0)
	viaArray, err := g.Uint8s()
	if err != nil {
		log.Fatal(err)
	}

	// The hand-written kernel on the default gocu device.
	rgb, err := chw.Uint8s() // planar: R plane, G plane, B plane
	if err != nil {
		log.Fatal(err)
	}
	viaKernel, where, tKernel, err := runKernel(rgb, n)
	if err != nil {
		log.Fatal(err)
	}

	diff, first := 0, -1
	for i := range viaArray {
		if viaArray[i] != viaKernel[i] {
			if first < 0 {
				first = i
			}
			diff++
		}
	}
	fmt.Printf("%d×%d image, %d pixels\n", b.Dx(), b.Dy(), n)
	fmt.Printf("array expression on %-12v %v\n", dev.String()+":", tArray.Round(time.Microsecond))
	fmt.Printf("lecture.Gray on %-17s %v\n", where+":", tKernel.Round(time.Microsecond))
	if diff != 0 {
		fmt.Printf("outputs differ in %d of %d pixels (first at %d: array %d, kernel %d)\n", diff, n, first, viaArray[first], viaKernel[first])
		os.Exit(1)
	}
	fmt.Printf("outputs identical (%d bytes); mean gray %.2f\n", n, mean(viaArray))

	if *out != "" {
		gi, err := g.Reshape(b.Dy(), b.Dx()).Image(array.HWC)
		if err != nil {
			log.Fatal(err)
		}
		f, err := os.Create(*out)
		if err != nil {
			log.Fatal(err)
		}
		if err := png.Encode(f, gi); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}

// runKernel runs lecture.Gray over the planar image on the default gocu
// device and returns the grayscale bytes, where it ran and how long the
// kernel took (excluding the copies).
func runKernel(rgb []uint8, n int) ([]uint8, string, time.Duration, error) {
	d, err := gocu.Default()
	if err != nil {
		return nil, "", 0, err
	}
	gray := make([]uint8, n)
	if !d.IsGPU() {
		cfg := sim.Config{Grid: kernel.Dim3{X: int32((n + 255) / 256)}, Block: kernel.Dim3{X: 256}}
		k := sim.Kernel{Name: "Gray", Func: func(t *kernel.Thread) { lecture.Gray(t, rgb, gray, int32(n)) }}
		t0 := time.Now()
		err := sim.Launch(cfg, k)
		return gray, "the simulator", time.Since(t0), err
	}
	mod, err := d.Compile(grayCUDA, gocu.Name("gray.cu"), gocu.Flags("--fmad=false"))
	if err != nil {
		return nil, "", 0, err
	}
	k, err := mod.Kernel("gray")
	if err != nil {
		return nil, "", 0, err
	}
	src, err := gocu.FromSlice(d, rgb)
	if err != nil {
		return nil, "", 0, err
	}
	defer src.Free()
	dst, err := gocu.Alloc[uint8](d, n)
	if err != nil {
		return nil, "", 0, err
	}
	defer dst.Free()
	cfg := gocu.Grid1D(n, 256)
	if err := k.Launch(cfg, src, dst, int32(n)); err != nil { // warm-up
		return nil, "", 0, err
	}
	if err := d.Synchronize(); err != nil {
		return nil, "", 0, err
	}
	t0 := time.Now()
	if err := k.Launch(cfg, src, dst, int32(n)); err != nil {
		return nil, "", 0, err
	}
	if err := d.Synchronize(); err != nil {
		return nil, "", 0, err
	}
	el := time.Since(t0)
	if err := dst.CopyTo(gray); err != nil {
		return nil, "", 0, err
	}
	return gray, strings.SplitN(d.String(), " ", 2)[0], el, nil
}

// testImage draws colour gradients with a pattern, so that every channel
// takes many values.
func testImage(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{
				R: uint8(255 * x / max(w-1, 1)),
				G: uint8(255 * y / max(h-1, 1)),
				B: uint8((x*x + 3*y*y + 7*x*y) >> 4),
				A: 255,
			})
		}
	}
	return img
}

func mean(v []uint8) float64 {
	s := 0
	for _, x := range v {
		s += int(x)
	}
	return float64(s) / float64(max(len(v), 1))
}
