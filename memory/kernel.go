package memory

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// Dot returns the dot product of a and b over their common length: for
// unit vectors, their cosine similarity. It is BLAS's sdot (gonum's,
// with SSE assembly on amd64, pure Go elsewhere).
func Dot(a, b []float32) float32 {
	n := min(len(a), len(b))
	if n == 0 {
		return 0
	}
	return blas32.Dot(blas32.Vector{N: n, Inc: 1, Data: a[:n]}, blas32.Vector{N: n, Inc: 1, Data: b[:n]})
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

// scanRows is scan on one goroutine: BLAS's sgemv, out = mat·q.
func scanRows(mat, q []float32, out []float32) {
	dim, rows := len(q), len(out)
	if dim == 0 || rows == 0 {
		return
	}
	a := blas32.General{Rows: rows, Cols: dim, Stride: dim, Data: mat[:rows*dim]}
	blas32.Gemv(blas.NoTrans, 1, a, blas32.Vector{N: dim, Inc: 1, Data: q}, 0, blas32.Vector{N: rows, Inc: 1, Data: out})
}
