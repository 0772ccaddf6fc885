package minds

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/existence-loop/sdk/internal/origin"
)

// ErrRedirect matches (errors.Is) the failure of a fetch that a server
// redirected to another origin (scheme, host and port) than the one
// configured, unless the host is in the mind's AllowRedirect: the
// redirect is not followed.
var ErrRedirect = errors.New("minds: redirect to another origin refused")

// ErrAddress matches (errors.Is) the failure of a fetch whose host
// resolved to an address the mind may not connect to: link-local
// (169.254.0.0/16, fe80::/10, which hold the clouds' metadata services
// such as 169.254.169.254), a known metadata address (fd00:ec2::254,
// 100.100.100.200, 192.0.0.192), multicast or unspecified, always; a
// private address (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) or a
// loopback one unless allowed (see [PollConfig].AllowPrivate). The check is
// made at connection time, after DNS resolution, so that neither a
// redirect nor a DNS answer can reach what the configuration did not.
var ErrAddress = errors.New("minds: address refused")

// metadataAddrs are cloud metadata services outside the link-local
// ranges.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS IMDS over IPv6
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
	netip.MustParseAddr("192.0.0.192"):     true, // Oracle Cloud
}

// sharedSpace is 100.64.0.0/10 (RFC 6598, carrier-grade NAT): private.
var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")

// netPolicy is where a mind's default client may go: the configured
// origin and the allowed redirect hosts, and which address classes it may
// connect to.
type netPolicy struct {
	origin        *url.URL
	redirects     *origin.Policy // the configured origin and the allowed redirect hosts
	allowPrivate  bool
	allowLoopback bool
}

// newPolicy returns the policy of a mind fetching base. Loopback is
// allowed when base's host is a loopback one (localhost, 127.0.0.0/8,
// ::1), private addresses when it is a private address literal; both when
// allowPrivate.
func newPolicy(base *url.URL, allowRedirect []string, allowPrivate bool) *netPolicy {
	p := &netPolicy{origin: base, redirects: origin.New(base, allowRedirect), allowPrivate: allowPrivate, allowLoopback: allowPrivate}
	host := strings.ToLower(base.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		p.allowLoopback = true
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		p.allowLoopback = p.allowLoopback || a.IsLoopback()
		p.allowPrivate = p.allowPrivate || isPrivate(a)
	}
	return p
}

func isPrivate(a netip.Addr) bool { return a.IsPrivate() || sharedSpace.Contains(a) }

// checkAddr reports whether the mind may connect to a.
func (p *netPolicy) checkAddr(a netip.Addr) error {
	a = a.Unmap()
	switch {
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || metadataAddrs[a]:
		return fmt.Errorf("%w: %s is a link-local or cloud metadata address", ErrAddress, a)
	case a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast():
		return fmt.Errorf("%w: %s is not a unicast address", ErrAddress, a)
	case a.IsLoopback() && !p.allowLoopback:
		return fmt.Errorf("%w: %s is a loopback address and the configured URL is not on loopback (allow private addresses to reach it)", ErrAddress, a)
	case isPrivate(a) && !p.allowPrivate:
		return fmt.Errorf("%w: %s is a private address (allow private addresses to reach it)", ErrAddress, a)
	}
	return nil
}

// control is the dialer's Control: it runs for every address a
// connection is attempted to, after DNS resolution.
func (p *netPolicy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address and port", ErrAddress, address)
	}
	return p.checkAddr(ap.Addr())
}

// checkRedirect is the client's CheckRedirect: the SDK's redirect rule
// (internal/origin: at most 10 redirects, each to the configured origin
// or an allowed host), its refusal wrapped in [ErrRedirect] with how to
// allow the host.
func (p *netPolicy) checkRedirect(req *http.Request, via []*http.Request) error {
	err := p.redirects.CheckRedirect(req, via)
	if !errors.Is(err, origin.ErrRedirect) {
		return err
	}
	u := req.URL
	return fmt.Errorf("%w: %s redirected to %s://%s, not %s://%s (allow the host with AllowRedirect, -poll-allow-redirect %s)",
		ErrRedirect, via[len(via)-1].URL.Redacted(), u.Scheme, u.Host, p.origin.Scheme, p.origin.Host, strings.ToLower(u.Hostname()))
}

// client returns an http.Client that keeps to the policy, with timeout.
// It does not use a proxy from the environment: the policy could only
// check the proxy's address, not the one fetched.
func (p *netPolicy) client(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: p.control}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Timeout: timeout, Transport: tr, CheckRedirect: p.checkRedirect}
}

// NewClient returns an http.Client that keeps to the minds' network rules
// for a fetch of origin, for other code that fetches a configured URL
// (the A2A tools, existence/toolloop/a2atools): every request ends after
// timeout; a redirect to another origin (scheme, host and port) is
// refused with [ErrRedirect] unless its host is in allowRedirect; a
// connection to a link-local, cloud metadata, multicast or unspecified
// address is refused with [ErrAddress], and to a private or loopback
// address unless allowPrivate or origin itself names one (see
// [ErrAddress]), checked after DNS resolution. It ignores proxies from
// the environment, whose own address is all the rule could check.
func NewClient(origin *url.URL, allowRedirect []string, allowPrivate bool, timeout time.Duration) *http.Client {
	return newPolicy(origin, allowRedirect, allowPrivate).client(timeout)
}
