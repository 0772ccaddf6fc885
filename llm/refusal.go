package llm

import (
	"regexp"
	"strconv"
	"strings"
)

// Context refusals: the words servers use to refuse a prompt over their
// context window, and the numbers they give.
var (
	// llama.cpp's server (exceed_context_size_error), and Ollama since its
	// runner is llama.cpp's server: "request (4476 tokens) exceeds the
	// available context size (4096 tokens), try increasing it".
	reAvailable = regexp.MustCompile(`request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)`)
	// OpenAI and vLLM: "This model's maximum context length is 8192
	// tokens. However, your messages resulted in 9000 tokens", "...
	// you requested 5000 tokens (4000 in the messages, 1000 in the
	// completion)", "... and your request has 3500 input tokens".
	reMaxContext = regexp.MustCompile(`maximum context length is (\d+) tokens`)
	reMessages   = regexp.MustCompile(`(\d+) in the messages`)
	reResulted   = regexp.MustCompile(`resulted in (\d+) tokens`)
	reInput      = regexp.MustCompile(`has (\d+) input tokens`)
)

// contextPhrases are the wordings of a context refusal, lower case.
var contextPhrases = []string{
	"exceeds the available context size",          // llama.cpp, current Ollama
	"the input length exceeds the context length", // Ollama's runner before
	"exceeds maximum context length",              // Ollama's /api/embed
	"maximum context length",                      // OpenAI, vLLM
	"context length exceeded",
	"exceed_context_size_error",
	"context_length_exceeded",
}

// contextCodes are the error codes and types of a context refusal.
var contextCodes = []string{"context_length_exceeded", "exceed_context_size_error"}

// ParseContextRefusal recognises a server's refusal of a prompt over its
// context window from the error message and the error's code or type
// (either may be empty), and returns the window and the prompt's size in
// tokens when the message gives them (0 when not). It knows:
//   - llama.cpp's server and current Ollama: "request (N tokens) exceeds
//     the available context size (W tokens), try increasing it", type
//     exceed_context_size_error;
//   - Ollama's runner before that: "the input length exceeds the context
//     length" (and "input exceeds maximum context length" of /api/embed);
//   - OpenAI: code context_length_exceeded, "This model's maximum context
//     length is W tokens. However, your messages resulted in N tokens";
//   - vLLM: "This model's maximum context length is W tokens. However,
//     you requested T tokens (N in the messages, R in the completion)", or
//     "... and your request has N input tokens".
//
// Numbers that do not parse as positive counts are left at 0.
func ParseContextRefusal(msg, code string) (window, prompt int, ok bool) {
	low := strings.ToLower(msg)
	code = strings.ToLower(strings.TrimSpace(code))
	for _, c := range contextCodes {
		ok = ok || code == c
	}
	for _, p := range contextPhrases {
		ok = ok || strings.Contains(low, p)
	}
	if !ok {
		return 0, 0, false
	}
	if g := reAvailable.FindStringSubmatch(low); g != nil {
		return count(g[2]), count(g[1]), true
	}
	if g := reMaxContext.FindStringSubmatch(low); g != nil {
		window = count(g[1])
	}
	for _, re := range []*regexp.Regexp{reMessages, reResulted, reInput} {
		if g := re.FindStringSubmatch(low); g != nil {
			prompt = count(g[1])
			break
		}
	}
	return window, prompt, true
}

// count parses a token count from a message: a positive number of at most
// nine digits (no window is that large), else 0.
func count(s string) int {
	if len(s) > 9 {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
