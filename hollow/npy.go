package hollow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// npyMatrix is a two-dimensional float matrix read from a NumPy .npy
// file, row-major, as float32.
type npyMatrix struct {
	rows, cols int
	data       []float32
}

// row returns row i.
func (m *npyMatrix) row(i int) []float32 { return m.data[i*m.cols : (i+1)*m.cols] }

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// parseNPY reads a .npy file (format versions 1, 2 and 3) holding a
// two-dimensional array of little- or big-endian float32 or float64
// ('<f4', '>f4', '<f8', '>f8'), in C or Fortran order, and returns it as
// a row-major float32 matrix. Anything else is an error saying what the
// file holds.
func parseNPY(data []byte) (*npyMatrix, error) {
	if len(data) < 10 || !bytes.HasPrefix(data, []byte("\x93NUMPY")) {
		return nil, errors.New("not a NumPy .npy file (no \\x93NUMPY magic)")
	}
	major := data[6]
	var hlen, start int
	switch major {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(data[8:10])), 10
	case 2, 3:
		if len(data) < 12 {
			return nil, errors.New("truncated .npy header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(data[8:12])), 12
	default:
		return nil, fmt.Errorf(".npy format version %d is not supported (1–3 are)", major)
	}
	if start+hlen > len(data) {
		return nil, errors.New("truncated .npy header")
	}
	header := string(data[start : start+hlen])
	body := data[start+hlen:]
	d := npyDescr.FindStringSubmatch(header)
	f := npyFortran.FindStringSubmatch(header)
	s := npyShape.FindStringSubmatch(header)
	if d == nil || f == nil || s == nil {
		return nil, fmt.Errorf(".npy header %q lacks descr, fortran_order or shape", strings.TrimSpace(header))
	}
	var dims []int
	for _, p := range strings.Split(s[1], ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf(".npy shape (%s) is not a list of sizes", s[1])
		}
		dims = append(dims, n)
	}
	if len(dims) != 2 {
		return nil, fmt.Errorf(".npy array has shape (%s); want two dimensions (rows, dimensions)", s[1])
	}
	rows, cols := dims[0], dims[1]
	var size int
	var order binary.ByteOrder
	switch d[1] {
	case "<f4":
		size, order = 4, binary.LittleEndian
	case ">f4":
		size, order = 4, binary.BigEndian
	case "<f8":
		size, order = 8, binary.LittleEndian
	case ">f8":
		size, order = 8, binary.BigEndian
	default:
		return nil, fmt.Errorf(".npy dtype %q is not a float32 or float64", d[1])
	}
	if rows > 0 && cols > (math.MaxInt32/size)/rows {
		return nil, fmt.Errorf(".npy array of %d×%d is too large", rows, cols)
	}
	if want := rows * cols * size; len(body) != want {
		return nil, fmt.Errorf(".npy body has %d bytes; a %d×%d %s array has %d", len(body), rows, cols, d[1], want)
	}
	m := &npyMatrix{rows: rows, cols: cols, data: make([]float32, rows*cols)}
	fortran := f[1] == "True"
	for k := range rows * cols {
		var v float32
		if size == 4 {
			v = math.Float32frombits(order.Uint32(body[4*k:]))
		} else {
			v = float32(math.Float64frombits(order.Uint64(body[8*k:])))
		}
		i, j := k/cols, k%cols
		if fortran {
			i, j = k%rows, k/rows
		}
		m.data[i*cols+j] = v
	}
	return m, nil
}
