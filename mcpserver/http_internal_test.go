package mcpserver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestHTTPDefaults: sessions expire after 30 minutes idle and at most
// 1,000 are open, unless configured; negative values turn either off.
func TestHTTPDefaults(t *testing.T) {
	s := &Server{}
	c := HTTPConfig{}.withDefaults()
	assert.Equal(t, 30*time.Minute, c.IdleTimeout)
	assert.Equal(t, 1000, c.MaxSessions)
	assert.Equal(t, 30*time.Minute, c.streamableOptions(s).SessionTimeout, "the go-sdk's own idle timeout")
	c = HTTPConfig{IdleTimeout: 5 * time.Minute, MaxSessions: 10}.withDefaults()
	assert.Equal(t, 5*time.Minute, c.streamableOptions(s).SessionTimeout)
	assert.Equal(t, 10, c.MaxSessions)
	c = HTTPConfig{IdleTimeout: -1, MaxSessions: -1}.withDefaults()
	assert.Zero(t, c.streamableOptions(s).SessionTimeout, "never expire")
	assert.Equal(t, -1, c.MaxSessions)
}
