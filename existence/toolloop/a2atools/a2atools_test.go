package a2atools_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/minds"
	"github.com/existence-loop/sdk/existence/toolloop/a2atools"
)

// executor is a remote agent built with a2a-go's own server: it answers
// each message with a task that completes with an artifact, or fails
// when the message says "fail".
type executor struct{}

func (executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		text := ec.Message.Parts[0].Text()
		if text == "fail" {
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("cannot do that"))), nil)
			return
		}
		if !yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart("the answer to "+text+" is 42")), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {}
}

// remote serves the executor over JSON-RPC with its card at the
// well-known path, behind a token.
func remote(t *testing.T, card func(url string) *a2a.AgentCard) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	h := a2asrv.NewHandler(executor{})
	auth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer tok" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	mux.Handle("/rpc", auth(a2asrv.NewJSONRPCHandler(h)))
	mux.Handle(a2asrv.WellKnownAgentCardPath, auth(a2asrv.NewStaticAgentCardHandler(card(srv.URL))))
	return srv
}

func oracleCard(url string) *a2a.AgentCard {
	return &a2a.AgentCard{Name: "The Oracle", Description: "Answers questions.", Version: "1",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(url+"/rpc", a2a.TransportProtocolJSONRPC)},
		Skills:              []a2a.AgentSkill{{ID: "answer", Name: "answer", Description: "answers any question", Tags: []string{}}},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}
}

func call(t *testing.T, a *a2atools.Agent, msg string) (string, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"message": msg})
	return a.Tool().Call(t.Context(), args)
}

func TestCallsARemoteAgent(t *testing.T) {
	srv := remote(t, oracleCard)
	a, err := a2atools.Connect(t.Context(), a2atools.Config{URL: srv.URL, Token: "tok", PollInterval: time.Millisecond})
	require.NoError(t, err)
	defer a.Close()
	tool := a.Tool()
	assert.Equal(t, "a2a_the_oracle", tool.Name())
	assert.Contains(t, tool.Description(), "Answers questions.")
	assert.Contains(t, tool.Description(), "answer: answers any question")

	out, err := call(t, a, "life")
	require.NoError(t, err)
	assert.Contains(t, out, "the answer to life is 42")

	_, err = call(t, a, "fail")
	require.ErrorIs(t, err, a2atools.ErrTask)
	assert.ErrorContains(t, err, "cannot do that")

	_, err = call(t, a, strings.Repeat("x", a2atools.MaxMessageChars+1))
	assert.ErrorContains(t, err, "the limit is 2000")
}

func TestCardRules(t *testing.T) {
	srv := remote(t, oracleCard)
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"name":"` + strings.Repeat("a", 1<<20) + `"}`))
	}))
	defer big.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+a2asrv.WellKnownAgentCardPath, http.StatusFound)
	}))
	defer other.Close()
	for _, tc := range []struct {
		name string
		cfg  a2atools.Config
		err  error
		msg  string
	}{
		{"no token", a2atools.Config{URL: srv.URL}, a2atools.ErrCard, "401"},
		{"too large", a2atools.Config{URL: big.URL, MaxCardBytes: 1000}, a2atools.ErrTooLarge, "larger than 1000 bytes"},
		{"redirect to another origin", a2atools.Config{URL: other.URL, Token: "tok"}, minds.ErrRedirect, "redirected"},
		{"not a URL", a2atools.Config{URL: "ftp://x"}, a2atools.ErrCard, "not an http"},
		{"bad name", a2atools.Config{URL: srv.URL, Token: "tok", Name: "a b"}, nil, "tool name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a2atools.Connect(t.Context(), tc.cfg)
			require.Error(t, err)
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
			}
			assert.ErrorContains(t, err, tc.msg)
		})
	}
}

// TestMetadataAddressRefused: a card cannot send the client to a cloud
// metadata service: the minds' address rule applies to every request.
func TestMetadataAddressRefused(t *testing.T) {
	srv := remote(t, func(string) *a2a.AgentCard { return oracleCard("http://169.254.169.254") })
	a, err := a2atools.Connect(t.Context(), a2atools.Config{URL: srv.URL, Token: "tok"})
	require.NoError(t, err)
	_, err = call(t, a, "life")
	require.ErrorIs(t, err, minds.ErrAddress)
}

func TestResponseCap(t *testing.T) {
	srv := remote(t, oracleCard)
	a, err := a2atools.Connect(t.Context(), a2atools.Config{URL: srv.URL, Token: "tok", MaxResponseBytes: 50, PollInterval: time.Millisecond})
	require.NoError(t, err)
	_, err = call(t, a, "life")
	require.ErrorIs(t, err, a2atools.ErrTooLarge)
}
