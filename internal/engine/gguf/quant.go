package gguf

import (
	"encoding/binary"
	"math"
)

// BlockSize is the number of weights in one Q8_0 block (ggml's QK8_0).
const BlockSize = 32

// Q8BlockBytes is the size of one encoded Q8_0 block in bytes: an IEEE
// half-precision scale followed by 32 signed bytes.
const Q8BlockBytes = 2 + BlockSize

// AppendQ8_0 appends the Q8_0 encoding of x to dst and returns the extended
// slice. len(x) must be a multiple of [BlockSize] (it panics otherwise: the
// shapes are the caller's). Each block of 32 values is stored as its scale
// d = max|x|/127 in half precision, then q_i = round(x_i/d) as int8 (rounding
// half away from zero), which is ggml's reference quantizer
// (quantize_row_q8_0_ref): the quotient uses the single-precision d, not the
// rounded half-precision one. A block of zeros has d = 0 and q = 0.
func AppendQ8_0(dst []byte, x []float32) []byte {
	if len(x)%BlockSize != 0 {
		panic("gguf: AppendQ8_0 length is not a multiple of 32")
	}
	for b := 0; b < len(x); b += BlockSize {
		blk := x[b : b+BlockSize]
		var amax float32
		for _, v := range blk {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax = a
			}
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		dst = binary.LittleEndian.AppendUint16(dst, Float16(d))
		for _, v := range blk {
			dst = append(dst, byte(int8(math.Round(float64(v*id)))))
		}
	}
	return dst
}

// Float16 returns the IEEE 754 half-precision bits nearest to f (ties to
// even), with overflow to infinity, subnormals and NaN handled as the
// hardware conversion (F16C) does.
func Float16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp == 0 && man == 0:
		return sign
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half (or underflow to zero): shift the full significand.
		if e < -10 {
			return sign
		}
		m := man | 0x800000
		shift := uint32(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, up to infinity: still correct
	}
	return sign | uint16(h)
}

// Float16ToFloat32 returns the single-precision value of the half-precision
// bits h (exactly: every half is representable).
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		v := float32(man) / 1024 / 16384 // 2^-14 * man/1024
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}
