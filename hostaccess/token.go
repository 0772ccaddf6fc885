package hostaccess

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
	"unicode"
)

// MinTokenLength is the least number of characters other than white
// space a token must have to guard a server on a non-loopback address
// (monitor, MCP, A2A): 16. [GenerateToken] makes one of 43.
const MinTokenLength = 16

// MinTokenDistinct is the least number of different characters (code
// points, white space aside) such a token must have: 8. Sixteen of one
// letter, or "abababab…", is guessed at once whatever its length.
const MinTokenDistinct = 8

// ErrWeakToken is the error of [CheckToken] (and so of the servers that
// call it: monitor.New, mcpserver, a2aserver) for a token too short or
// too plain to guard a server other machines can reach.
var ErrWeakToken = errors.New("token too weak for a non-loopback address")

// CheckToken returns an error matching [ErrWeakToken], saying which rule
// failed, when token, white space aside, has fewer than [MinTokenLength]
// characters (code points), fewer than [MinTokenDistinct] different ones,
// or is mostly a run of repeated or consecutive characters (more than half
// of its neighbouring pairs the same character or one code point apart:
// "aaaa…", "abcdefgh…", "12345678…"); nil otherwise. A random token of
// the same length passes these rules almost surely ([GenerateToken]'s
// always do). A server on a non-loopback address needs such a token; on
// loopback any token is accepted.
func CheckToken(token string) error {
	var rs []rune
	distinct := map[rune]bool{}
	for _, r := range token {
		if !unicode.IsSpace(r) {
			rs = append(rs, r)
			distinct[r] = true
		}
	}
	const better = "generate one instead: GenerateToken (in `existence`, -http-token auto) makes 43 random characters, 256 bits; or `openssl rand -hex 16`"
	if len(rs) < MinTokenLength {
		return fmt.Errorf("%w: it has %d characters other than white space, want at least %d (%s)", ErrWeakToken, len(rs), MinTokenLength, better)
	}
	if len(distinct) < MinTokenDistinct {
		return fmt.Errorf("%w: it has %d different characters, want at least %d: a token of few characters is guessed at once whatever its length (%s)", ErrWeakToken, len(distinct), MinTokenDistinct, better)
	}
	steps := 0
	for i := 1; i < len(rs); i++ {
		if d := rs[i] - rs[i-1]; d >= -1 && d <= 1 {
			steps++
		}
	}
	if 2*steps > len(rs)-1 {
		return fmt.Errorf("%w: it is mostly a run of repeated or consecutive characters (%d of its %d neighbouring pairs), which is guessed at once (%s)", ErrWeakToken, steps, len(rs)-1, better)
	}
	return nil
}

// GenerateToken returns a new random token: 32 bytes from crypto/rand,
// base64url without padding (43 characters).
func GenerateToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Loopback reports whether the listen address addr ("host:port") accepts
// connections only from this machine: its host is "localhost" or a
// loopback IP address (127.0.0.0/8, ::1). An empty host, 0.0.0.0 and ::
// mean every interface, and any other name may resolve to a public
// address, so they are not loopback; neither is an address that does not
// parse.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
