package monitor_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/memstore"
)

// A monitor over a runner, served by NewServer: the server has safe
// timeouts, and shutting it down also ends the event streams.
func ExampleNewServer() {
	rn, err := runner.New(runner.Config{Store: memstore.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rn.Close()
	addr := "127.0.0.1:0" // a loopback address; a token is needed for any other
	mon, err := monitor.New(monitor.Config{Runner: rn, Token: "s3cret", Addr: addr, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := monitor.NewServer(addr, mon)
	ln, err := net.Listen("tcp", srv.Addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())

	resp, err := http.Get("http://" + ln.Addr().String() + "/api/agents")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, "without the token")
	fmt.Println(srv.ReadHeaderTimeout)
	// Output:
	// 401 without the token
	// 10s
}

// New refuses a monitor on an address other machines can reach unless it
// has a token.
func ExampleNew_noToken() {
	rn, err := runner.New(runner.Config{Store: memstore.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rn.Close()
	_, err = monitor.New(monitor.Config{Runner: rn, Addr: "0.0.0.0:8080"})
	fmt.Println(errors.Is(err, monitor.ErrNoToken))
	// Output:
	// true
}
