package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// ErrFormat is returned by [Read] for input that is not a GGUF v3 file it
// can parse.
var ErrFormat = errors.New("gguf: bad format")

// TensorInfo is one entry of a GGUF file's tensor table.
type TensorInfo struct {
	// Name is the tensor's name ("blk.0.attn_q.weight").
	Name string
	// Dims are the ggml dimensions, row length (ne[0]) first.
	Dims []uint64
	// Type is the ggml type ([TypeF32], [TypeQ8_0], ...).
	Type uint32
	// Offset is the data's offset from the start of the data section, in
	// bytes.
	Offset uint64
}

// Header is what [Read] parses: everything before the tensor data.
type Header struct {
	// Version is the GGUF version.
	Version uint32
	// KVs are the metadata pairs, in file order. Values are uint8, int8,
	// uint16, int16, uint32, int32, uint64, int64, float32, float64, bool,
	// string, or []any of those for arrays.
	KVs []KV
	// Tensors is the tensor table, in file order.
	Tensors []TensorInfo
	// DataOffset is where the tensor data starts in the file, in bytes
	// (the header's end rounded up to the alignment).
	DataOffset int64
}

// Get returns the value of metadata key k, and whether it is present.
func (h *Header) Get(k string) (any, bool) {
	for _, kv := range h.KVs {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return nil, false
}

// maxLen bounds strings and arrays so that a corrupt length can't exhaust
// memory.
const maxLen = 1 << 28

// Read parses a GGUF v2 or v3 header (metadata and tensor table) from r,
// reading no tensor data. It returns an error wrapping [ErrFormat] for
// input that is not GGUF, a truncated header or an unknown value type.
func Read(r io.Reader) (*Header, error) {
	rd := &reader{r: bufio.NewReaderSize(r, 1<<16)}
	var magic [4]byte
	rd.read(magic[:])
	if rd.err == nil && string(magic[:]) != Magic {
		return nil, fmt.Errorf("%w: magic %q", ErrFormat, magic[:])
	}
	h := &Header{Version: rd.u32()}
	if rd.err == nil && h.Version != 2 && h.Version != 3 {
		return nil, fmt.Errorf("%w: version %d", ErrFormat, h.Version)
	}
	nt, nkv := rd.u64(), rd.u64()
	if rd.err == nil && (nt > maxLen || nkv > maxLen) {
		return nil, fmt.Errorf("%w: %d tensors, %d keys", ErrFormat, nt, nkv)
	}
	align := uint64(Alignment)
	for i := uint64(0); i < nkv && rd.err == nil; i++ {
		k := rd.str()
		v := rd.value(rd.u32(), 0)
		if k == "general.alignment" {
			if a, ok := v.(uint32); ok && a > 0 {
				align = uint64(a)
			}
		}
		h.KVs = append(h.KVs, KV{Key: k, Value: v})
	}
	for i := uint64(0); i < nt && rd.err == nil; i++ {
		t := TensorInfo{Name: rd.str()}
		nd := rd.u32()
		if nd > 4 {
			rd.fail(fmt.Errorf("%w: tensor %s has %d dimensions", ErrFormat, t.Name, nd))
		}
		for j := uint32(0); j < nd && rd.err == nil; j++ {
			t.Dims = append(t.Dims, rd.u64())
		}
		t.Type, t.Offset = rd.u32(), rd.u64()
		h.Tensors = append(h.Tensors, t)
	}
	if rd.err != nil {
		if errors.Is(rd.err, io.EOF) || errors.Is(rd.err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: truncated header: %v", ErrFormat, rd.err)
		}
		return nil, rd.err
	}
	h.DataOffset = int64((uint64(rd.n) + align - 1) / align * align)
	return h, nil
}

type reader struct {
	r   *bufio.Reader
	n   int64
	err error
	b   [8]byte
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) read(p []byte) {
	if r.err != nil {
		return
	}
	n, err := io.ReadFull(r.r, p)
	r.n += int64(n)
	r.fail(err)
}

func (r *reader) u8() uint8   { r.read(r.b[:1]); return r.b[0] }
func (r *reader) u16() uint16 { r.read(r.b[:2]); return binary.LittleEndian.Uint16(r.b[:2]) }
func (r *reader) u32() uint32 { r.read(r.b[:4]); return binary.LittleEndian.Uint32(r.b[:4]) }
func (r *reader) u64() uint64 { r.read(r.b[:8]); return binary.LittleEndian.Uint64(r.b[:8]) }

func (r *reader) str() string {
	n := r.u64()
	if n > maxLen {
		r.fail(fmt.Errorf("%w: string of %d bytes", ErrFormat, n))
	}
	if r.err != nil {
		return ""
	}
	p := make([]byte, n)
	r.read(p)
	return string(p)
}

func (r *reader) value(typ uint32, depth int) any {
	switch typ {
	case 0:
		return r.u8()
	case 1:
		return int8(r.u8())
	case 2:
		return r.u16()
	case 3:
		return int16(r.u16())
	case typeUint32:
		return r.u32()
	case typeInt32:
		return int32(r.u32())
	case typeFloat32:
		return math.Float32frombits(r.u32())
	case typeBool:
		return r.u8() != 0
	case typeString:
		return r.str()
	case typeArray:
		et, n := r.u32(), r.u64()
		if n > maxLen || depth > 2 {
			r.fail(fmt.Errorf("%w: array of %d elements at depth %d", ErrFormat, n, depth))
			return nil
		}
		var out []any
		for i := uint64(0); i < n && r.err == nil; i++ {
			out = append(out, r.value(et, depth+1))
		}
		return out
	case typeUint64:
		return r.u64()
	case 11:
		return int64(r.u64())
	case 12:
		return math.Float64frombits(r.u64())
	}
	r.fail(fmt.Errorf("%w: value type %d", ErrFormat, typ))
	return nil
}
