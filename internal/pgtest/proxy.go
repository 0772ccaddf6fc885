package pgtest

import (
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// Proxy is a loopback TCP proxy in front of a server, for partition tests.
// While cut ([Proxy.Cut]), it forwards nothing in either direction: bytes
// already read are held, as a network that drops packets holds a TCP
// sender's retransmissions, and are delivered after [Proxy.Restore]. The
// connections stay open, so neither end notices the partition except by
// timing out.
type Proxy struct {
	// Addr is the proxy's listening address, "127.0.0.1:port".
	Addr string

	target string
	ln     net.Listener

	mu    sync.Mutex
	cut   bool
	gate  chan struct{} // closed while traffic flows
	conns []net.Conn
	wg    sync.WaitGroup
}

// NewProxy starts a proxy on a free loopback port forwarding to target
// ("host:port"); it is closed when the test ends.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("pgtest: proxy: %v", err)
	}
	gate := make(chan struct{})
	close(gate)
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, gate: gate}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.Close)
	return p
}

// Port returns the proxy's port.
func (p *Proxy) Port() int {
	_, port, _ := net.SplitHostPort(p.Addr)
	n, _ := strconv.Atoi(port)
	return n
}

// Cut stops all traffic through the proxy until [Proxy.Restore].
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cut {
		p.cut = true
		p.gate = make(chan struct{})
	}
}

// Restore lets the held and new traffic through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		p.cut = false
		close(p.gate)
	}
}

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() {
	p.ln.Close()
	p.Restore()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) wait() {
	p.mu.Lock()
	g := p.gate
	p.mu.Unlock()
	<-g
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wait()
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies src to dst, holding each chunk while the proxy is cut.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.wait()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			return
		}
	}
}
