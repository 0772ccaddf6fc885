package memory

import (
	"runtime"
	"sync"
)

// Dot returns the dot product of a and b over their common length: for
// unit vectors, their cosine similarity. Sixteen products per step go
// into four float32 accumulators (a tree of four each), so that the
// additions do not wait on one another and the loop's bookkeeping is
// shared by sixteen values; the slices are cut to length once, so the
// products and sums carry no bounds checks (one slice check per sixteen
// values remains).
func Dot(a, b []float32) float32 {
	n := min(len(a), len(b))
	a, b = a[:n:n], b[:n:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i <= n-16; i += 16 {
		x := a[i : i+16 : i+16] // one slice check per 16 values
		y := b[i : i+16 : i+16] // none: b has a's length

		s0 += (x[0]*y[0] + x[4]*y[4]) + (x[8]*y[8] + x[12]*y[12])
		s1 += (x[1]*y[1] + x[5]*y[5]) + (x[9]*y[9] + x[13]*y[13])
		s2 += (x[2]*y[2] + x[6]*y[6]) + (x[10]*y[10] + x[14]*y[14])
		s3 += (x[3]*y[3] + x[7]*y[7]) + (x[11]*y[11] + x[15]*y[15])
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// parallelMin is the number of values (rows × dimensions) below which a
// scan stays on one goroutine: about 1 MB of float32, where splitting
// starts to pay for the goroutines.
const parallelMin = 1 << 18

// scan writes into out[i] the dot product of q with row i of mat, a
// row-major matrix of len(out) rows of len(q) values. Large matrices are
// split into one contiguous block of rows per available processor
// (GOMAXPROCS).
func scan(mat, q []float32, out []float32) {
	dim := len(q)
	rows := len(out)
	if dim == 0 || rows == 0 {
		return
	}
	workers := runtime.GOMAXPROCS(0)
	if rows*dim < parallelMin || workers < 2 {
		scanRows(mat, q, out)
		return
	}
	workers = min(workers, rows)
	per := (rows + workers - 1) / workers
	var wg sync.WaitGroup
	for start := 0; start < rows; start += per {
		end := min(start+per, rows)
		wg.Go(func() { scanRows(mat[start*dim:end*dim], q, out[start:end]) })
	}
	wg.Wait()
}

// scanRows is scan on one goroutine.
func scanRows(mat, q []float32, out []float32) {
	dim := len(q)
	for i := range out {
		out[i] = Dot(mat[i*dim:(i+1)*dim:(i+1)*dim], q)
	}
}
