package render

import "github.com/lumen-home/lumen/internal/splitmix"

// pixelRand is the stream behind random() and Math.random() for one pixel
// of one frame.
type pixelRand struct{ splitmix.Rand }

// seed starts the stream of one pixel of one frame: random() depends on
// the state's seed, the frame and the pixel only, not on how many pixels
// there are or which pixels were drawn before.
func (r *pixelRand) seed(seed uint64, frame int, pixel int) {
	h := splitmix.Mix(seed ^ 0x6c756d656e2e7278) // "lumen.rx"
	h = splitmix.Mix(h + uint64(frame))
	r.Seed(splitmix.Mix(h ^ uint64(pixel)*splitmix.Gamma))
}
