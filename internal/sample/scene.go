package sample

import (
	"image"
	"math"
)

// scene draws the sample picture, a landscape at sunset chosen so that its
// grayscale version is worth looking at: a sky graded from violet to
// orange, a sun with a halo, three ranges of hills in purple, teal and
// green, a lake that mirrors them, and red, yellow and blue balloons: the
// red and the blue one, far apart in colour, turn into nearly the same gray.
// It uses only smooth shapes, so the PNG stays small.
func scene(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	W, H := float64(w), float64(h)
	horizon := 0.68 * H
	sunX, sunY, sunR := 0.70*W, 0.52*H, 0.075*W
	type balloon struct{ x, y, r, cr, cg, cb float64 }
	balloons := []balloon{
		{0.20 * W, 0.22 * H, 0.060 * W, 0.90, 0.16, 0.16},
		{0.33 * W, 0.33 * H, 0.045 * W, 0.95, 0.85, 0.10},
		{0.46 * W, 0.18 * H, 0.052 * W, 0.18, 0.35, 0.92},
	}
	hill := func(x float64, base, amp, f1, f2, ph float64) float64 {
		return base - amp*(0.6*math.Sin(x*f1+ph)+0.4*math.Sin(x*f2+2*ph))
	}
	sky := func(y float64) (r, g, b float64) {
		t := y / horizon // 0 at the top, 1 at the horizon
		r = mix(0.25, 0.99, t)
		g = mix(0.10, 0.62, t*t)
		b = mix(0.45, 0.30, t)
		return
	}
	for py := range h {
		for px := range w {
			x, y := float64(px)+0.5, float64(py)+0.5
			var r, g, b float64
			if y < horizon {
				r, g, b = sky(y)
				// Halo and disc of the sun.
				d := math.Hypot(x-sunX, y-sunY)
				glow := math.Exp(-d * d / (2 * (3 * sunR) * (3 * sunR)))
				r, g, b = mix(r, 1, 0.55*glow), mix(g, 0.85, 0.55*glow), mix(b, 0.5, 0.45*glow)
				if d < sunR {
					r, g, b = 1, 0.93, mix(0.55, 0.75, 1-d/sunR)
				}
				// Hills, far to near.
				if y > hill(x/W, 0.60*H, 0.05*H, 9, 23, 0.4) {
					r, g, b = shade(0.42, 0.30, 0.58, y, 0.52*H, horizon)
				}
				if y > hill(x/W, 0.64*H, 0.04*H, 13, 31, 1.7) {
					r, g, b = shade(0.10, 0.50, 0.50, y, 0.58*H, horizon)
				}
				if y > hill(x/W, 0.67*H, 0.03*H, 7, 19, 2.9) {
					r, g, b = shade(0.20, 0.62, 0.18, y, 0.62*H, horizon)
				}
			} else {
				// The lake mirrors the sky and the sun, rippled, over deep blue.
				my := horizon - (y - horizon)
				r, g, b = sky(my)
				ripple := 0.5 + 0.5*math.Sin(y*0.9+4*math.Sin(x*0.02))
				dx, dy := (x-sunX)/(1+0.8*ripple), (my-sunY)/3
				glow := math.Exp(-(dx*dx + dy*dy) / (2 * sunR * sunR))
				r, g, b = mix(r, 1, 0.8*glow), mix(g, 0.85, 0.8*glow), mix(b, 0.55, 0.6*glow)
				depth := 0.35 + 0.4*(y-horizon)/(H-horizon) - 0.08*ripple
				r, g, b = mix(r, 0.08, depth), mix(g, 0.22, depth), mix(b, 0.50, depth)
			}
			// Balloons: shaded spheres with a string.
			for _, bl := range balloons {
				dx, dy := (x-bl.x)/bl.r, (y-bl.y)/(1.15*bl.r)
				if d2 := dx*dx + dy*dy; d2 < 1 {
					light := 0.55 + 0.45*math.Sqrt(1-d2) - 0.25*(dx+dy)
					spec := math.Pow(math.Max(0, 1-math.Hypot(dx+0.35, dy+0.35)/0.3), 2)
					r, g, b = bl.cr*light+spec, bl.cg*light+spec, bl.cb*light+spec
				} else if math.Abs(x-bl.x-3*math.Sin((y-bl.y)/9)) < 0.8 && y > bl.y+1.15*bl.r && y < bl.y+4*bl.r {
					r, g, b = 0.15, 0.12, 0.10
				}
			}
			i := py*img.Stride + 4*px
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = unit(r), unit(g), unit(b), 255
		}
	}
	return img
}

// shade darkens a hill colour towards its foot, lit from above.
func shade(r, g, b, y, top, bottom float64) (float64, float64, float64) {
	k := 1.1 - 0.5*(y-top)/(bottom-top)
	return r * k, g * k, b * k
}

func mix(a, b, t float64) float64 { return a + (b-a)*t }

// unit maps [0, 1] to a byte, clamping.
func unit(v float64) uint8 {
	return uint8(math.Round(255 * math.Min(1, math.Max(0, v))))
}
