// Package openai is the hallucination-rate backend for language models
// served through an OpenAI-compatible completions endpoint: a Client is a
// hallucination.CGM over text. Scoring a given answer needs the
// log-probabilities of prompt tokens (echo with logprobs), which vLLM
// returns; servers that only return generation log-probabilities
// (llama.cpp server and Ollama at the time of writing) are refused with
// an error saying so, never scored wrongly.
//
// # Prompt format
//
// Contexts are written as in the paper's Appendix E.2: every example as
// "Input: <x>\nLabel: <y>\n\n", and a query as "Input: <x>\nLabel:".
//
//   - Imagined examples (Algorithm 1) are generated from the context
//     followed by "Input:", up to the blank line that ends an example
//     (stop "\n\n", PairMaxTokens tokens, temperature 1, PairTopP), and
//     parsed back into (x, y); unparseable generations are redrawn.
//   - Responses are generated after the query with temperature 1 and top_p
//     1, up to the end of the line (stop "\n", MaxTokens tokens). The
//     response y is the generated line with surrounding spaces removed, and
//     log p(y | x, D) is the sum of the log-probabilities of the generated
//     tokens that spell it (the line terminator is not scored). Empty lines
//     are redrawn, so responses are conditioned on being non-empty.
//   - log p(y | x, D) of a given response is read from the token
//     log-probabilities the server echoes for the prompt "<context>Input:
//     <x>\nLabel: <y>" ("echo": true, "logprobs": 1): the tokens from the
//     end of "Label:" to the end of the prompt. The paper's labels are single
//     tokens, for which this is exactly the log-probability of the token.
//     Distinct responses are scored once per call.
//
// A server that returns no log-probabilities, or does not echo the prompt,
// is reported with an error that says so (ErrNoLogprobs): the estimators
// cannot work without them.
//
// # Transport
//
// Every request carries a "seed" drawn from the caller's generator (as in
// categorical.DrawSeed), so a server that honours seeds (vLLM, and the test
// server of package llmtest) makes the whole estimate reproducible.
// The transport is package llm's: at most Concurrency requests in flight
// per Client, each attempt limited by Timeout, and retried with
// exponential back-off (and the server's Retry-After) on 408, 429, 5xx,
// timeouts, connection errors and cut-off responses, up to MaxRetries
// times. Connections are kept alive and reused. Response
// bodies larger than MaxResponseBytes are refused. The API key is sent as
// a bearer token and never appears in errors.
package openai
