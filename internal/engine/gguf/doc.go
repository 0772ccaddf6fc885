// Package gguf writes GGUF v3 model files with seeded random weights in a
// real small model's shape, for tests that run a real engine (llama.cpp
// through node-llama-cpp, Ollama) offline. No trained weights can be had
// through the package registries, but a file in a real model's shape
// exercises everything the SDK depends on: the replies' words are
// nonsense, but tokenization, the chat template, token counts, the context
// window, the KV cache, grammar-constrained JSON and CPU speed are real.
//
// # The file
//
// [Write] writes a llama-architecture model: [SmolLM2] (SmolLM2-135M's
// shape: hidden 576, 30 layers, 9 query and 3 key/value heads,
// feed-forward 1536, RMS epsilon 1e-5, rope theta 100000, 8192-token
// context) by default, [Tiny] for fast tests, or any [Spec]. Weight
// matrices are Q8_0 (blocks of 32 int8 with a half-precision scale,
// [AppendQ8_0]), norms F32, data 32-byte aligned. With a 4096-token
// vocabulary instead of SmolLM2's 49152 the file is 118 MB and holds
// 110.9 million weights. The output matrix is written (not tied to the
// token embeddings, which llama.cpp would also accept) because it carries
// the logit biases below. [Read] parses a file's header (metadata and
// tensor table) back; [TokenizerFrom] rebuilds its tokenizer.
//
// The same [Config] gives the same bytes: the tokenizer trainer breaks
// every tie by text, and each tensor draws from its own math/rand/v2 PCG
// stream seeded with (Seed, tensor index). The metadata key [InputsKey]
// holds a digest of the inputs, which cmd/mkgguf uses to leave an
// up-to-date file alone.
//
// # The tokenizer
//
// [Train] learns a byte-level BPE vocabulary (GGUF tokenizer.ggml.model
// "gpt2") from a corpus, by default the repository's own .go and .md files
// ([ReadRepo]), with the ChatML special tokens <|endoftext|> (unknown),
// <|im_start|> (beginning of sequence) and <|im_end|> (end of sequence and
// padding) at ids 0–2 as in SmolLM2, and the 256 byte tokens after them,
// so any text encodes losslessly. The pre-tokenizer is llama.cpp's
// "smollm" (tokenizer.ggml.pre), and [Tokenizer.Encode] reproduces
// llama.cpp's encoding: on 64 samples of repository text and Unicode edge
// cases, node-llama-cpp 3.21.1 and Encode gave the same ids. The chat
// template ([ChatTemplate]) is ChatML; node-llama-cpp picks its ChatML
// wrapper for it and llama.cpp's template detection recognises it too.
// add_bos_token is false, as in SmolLM2.
//
// # The weights, and why some are not random
//
// All weights are normal random values scaled so that activations keep a
// root mean square near 1 and the logits a spread of about 1.5 nats
// ([Shaping]). With random logits a grammar-constrained JSON reply never
// ends: inside a string almost every token is allowed and the closing
// quote is one choice among thousands, so strings run to the reply limit
// (measured: a reply to the SDK's response schema with no shaping ran past
// 1,000 tokens and was cut inside a string). So the weights carry a few
// fixed logit biases: element 0 of every token embedding is 1, no layer
// writes element 0 (those rows of the attention output and feed-forward
// down matrices are zero), the final norm scales it back to about 1, and
// element 0 of each token's output row then adds a constant to that
// token's logit. Tokens that start with '"' (and hold no ',') get
// [Shaping].CloseBias, tokens holding ',' get CommaBias (a penalty), and
// <|im_end|> gets StopBias. Under a JSON-schema grammar, strings then
// close after a few tokens and optional properties and array items are
// seldom added; without a grammar, replies end after about 15 tokens.
// One more rule keeps strings from closing as soon as they open: the
// tokens that end by opening a string value (`":"`, `:"`, `["`, which a
// model favouring '"' picks to go from a key to its value) carry -1 in
// the bias channel instead of 1 ([Shaping].OpenerChannel), which reverses
// every bias for the next token only. Without it, 12 of 30 string values
// came out blank and 2 replies in 10 had both content and reasoning blank,
// which the SDK's validation rejects.
// Everything else about the replies stays random.
//
// [DefaultShaping] (logit spread 1.5, CloseBias 5.5, CommaBias -3,
// StopBias 6.5, OpenerChannel -1) was chosen by measurement (see
// Figures). A bias on every token holding '"', '}' or ']' instead made
// things worse: those tokens are also allowed inside strings and filled
// them with brackets (replies of 230 to 340 tokens). CloseBias 7 gave
// strings of 1.3 tokens on average, 5.5 gives 2.2 for about the same reply
// length. The price of the biases is that free text is mostly quotes and
// punctuation, and short. Greedy decoding (temperature 0) also gives a
// valid JSON reply and a free reply that ends.
//
// # Running it
//
// Load the file with node-llama-cpp's getLlama({gpu: false}) and give the
// context an explicit thread count (createContext({threads: 1}) on a
// shared 2-core machine): llama.cpp's worker threads spin while they wait
// for each other, and when other processes hold the cores two threads
// generated 1.5 tokens/s where one generated 34.
//
// # Figures
//
// Measured with node-llama-cpp 3.21.1 (prebuilt CPU binary, gpu: false,
// threads: 1, context 4096 or 8192 tokens) on a 2-core machine shared
// with other work (load average 6 to 19 during the runs), on the file
// cmd/mkgguf writes from this repository with seed 1:
//
//   - writing the 118 MB file: 9 s, of which training the 4096-token
//     tokenizer on 4.9 MB of text is about 2 s; repository text then takes
//     2.8 characters per token (fewer than a trained model's vocabulary
//     gives);
//   - loading it: 0.2 to 7 s (depending on the load);
//   - reading a 300-token prompt: 226 tokens/s (load 6); a 1,500-token
//     prompt: 73 tokens/s (load 6) to 45 tokens/s (load 19);
//   - generating: 34 tokens/s (load 6) to 6 tokens/s (load 19);
//   - replies under the JSON-schema grammar of prompt.Schema (temperature
//     0.8, 8 to 10 seeds): 122 to 133 tokens on average, 160 at most, all
//     valid, none with both content and reasoning blank; node-llama-cpp's
//     grammar makes every property required, so that is the schema's
//     whole structure with short strings and short arrays; greedy: 136
//     tokens;
//   - replies under a three-field schema (two strings and a number): 33
//     tokens on average, 44 at most;
//   - free replies (no grammar, temperature 0.8): 15 tokens on average,
//     from 1 to 68; greedy: 13;
//   - with no closing bias (random logits of spread 2), a prompt.Schema
//     reply ran past 1,000 tokens inside a string.
package gguf
