package gguf

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestFloat16(t *testing.T) {
	tests := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{65504, 0x7bff},                  // largest half
		{65520, 0x7c00},                  // rounds up to infinity
		{0.1, 0x2e66},                    // 0.0999755859375
		{16.0 / 127, 0x3008},             // 0.12598 → 1.0078125 × 2^-3
		{float32(math.Ldexp(1, -24)), 1}, // smallest subnormal
		{float32(math.Ldexp(1, -26)), 0}, // underflows to zero
		{float32(math.Ldexp(3, -25)), 2}, // 1.5 subnormal units: tie to even
		{1 + 1.0/2048, 0x3c00},           // halfway between 1 and the next: tie to even (down)
		{1 + 3.0/2048, 0x3c02},           // halfway: tie to even (up)
		{float32(math.Inf(1)), 0x7c00},
	}
	for _, tt := range tests {
		if got := Float16(tt.in); got != tt.want {
			t.Errorf("Float16(%g) = %#04x, want %#04x", tt.in, got, tt.want)
		}
		if back := Float16ToFloat32(tt.want); tt.want != 0x7c00 && Float16(back) != tt.want {
			t.Errorf("Float16ToFloat32(%#04x) = %g does not round-trip", tt.want, back)
		}
	}
	if got := Float16(float32(math.NaN())); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("Float16(NaN) = %#04x, want a NaN", got)
	}
}

// TestAppendQ8_0 checks a block against values computed by hand:
// x_j = j - 16, so max|x| = 16, d = 16/127 (half 0x3008) and
// q_j = round((j-16) × 127/16), rounding half away from zero.
func TestAppendQ8_0(t *testing.T) {
	x := make([]float32, 64)
	for j := range 32 {
		x[j] = float32(j - 16)
	}
	// The second block is all zeros: scale 0, quants 0.
	got := AppendQ8_0(nil, x)
	if len(got) != 2*Q8BlockBytes {
		t.Fatalf("len = %d, want %d", len(got), 2*Q8BlockBytes)
	}
	if d := binary.LittleEndian.Uint16(got); d != 0x3008 {
		t.Errorf("scale = %#04x, want 0x3008", d)
	}
	want := map[int]int8{
		0:  -127, // -16 × 7.9375
		1:  -119, // -15 × 7.9375 = -119.06
		2:  -111, // -14 × 7.9375 = -111.125
		8:  -64,  // -8 × 7.9375 = -63.5: half away from zero
		15: -8,   // -1 × 7.9375 = -7.94
		16: 0,
		17: 8,
		24: 64, // 63.5 → 64
		31: 119,
	}
	for j, w := range want {
		if q := int8(got[2+j]); q != w {
			t.Errorf("q[%d] = %d, want %d", j, q, w)
		}
	}
	for _, b := range got[Q8BlockBytes:] {
		if b != 0 {
			t.Fatalf("zero block encoded as %v", got[Q8BlockBytes:])
		}
	}
	// Dequantized values are within half a step of the input.
	d := Float16ToFloat32(0x3008)
	for j := range 32 {
		if diff := math.Abs(float64(float32(int8(got[2+j]))*d - x[j])); diff > float64(d) {
			t.Errorf("x[%d] = %g dequantizes %g away", j, x[j], diff)
		}
	}
}

func TestAppendQ8_0PanicsOnPartialBlock(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for 33 values")
		}
	}()
	AppendQ8_0(nil, make([]float32, 33))
}
