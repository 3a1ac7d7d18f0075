// Package llmtest serves an exact Bayesian model through the
// OpenAI-compatible completions, chat and embeddings APIs (the wire model
// of package llm), so that every speaker of that API in genlens (package
// llm, the hallucination backend openai, the uncertainty proxy) can be
// tested end to end against known answers, and tried by hand without a
// language model (genlens hallucination serve-model).
//
// The model is the Dirichlet-categorical classifier of package
// categorical, written in the prompt format of package openai: inputs and
// labels have names, and the server reads a prompt as the token sequence
//
//	"Input:" " <input>" "\n" "Label:" " <label>" "\n" "\n" "Input:" ...
//
// in which every token is certain (log-probability 0) except the input
// names, uniform over the inputs, and the labels, whose probability is the
// model's posterior predictive given the complete examples before them. It
// continues a prompt by sampling from the same model, so it is a real
// conditional generative model over text, not canned answers: it
// generates whole imagined examples, labels for queries, and echoes and
// scores prompts with their true log-probabilities.
//
// Sampling follows categorical's seeding convention: a request's "seed"
// starts the stream categorical.NewStream(seed), and each uncertain token
// takes the next uniform. A Posterior asked directly for the same draw with
// the same seed gives the same answer, which is what the tests compare.
//
// A generated answer ends by itself after its label (finish_reason
// "stop"), as a language model's answer ends with its end-of-text token,
// when max_tokens leaves room for one more token. A prompt outside the
// grammar is a 400 whose message describes the format.
//
// /v1/chat/completions reads the prompt as the contents of the messages
// concatenated in order (roles are not part of the grammar) and answers in
// the chat format, with the chat API's log-probabilities ("logprobs":
// true, "top_logprobs": k: choices[].logprobs.content[].{token, logprob,
// top_logprobs}); echo is refused there. "stream": true answers either
// API as server-sent events, one per token, ending with "data: [DONE]". /v1/embeddings
// answers Embedding of every input, a hashed bag of words and character
// trigrams, under the name Config.EmbeddingModel.
//
// To test clients against servers that misbehave, Config.MaxN caps the
// choices of a response (llama.cpp server answers one), and Config.Fault
// picks a Fault for every POST request: 429 with Retry-After, 500, a hang,
// a body cut off mid-way, JSON of the wrong shape, fewer choices than
// asked.
//
// Supported request fields: model, prompt (a string), messages, max_tokens,
// temperature (0 is greedy; otherwise the probabilities are raised to
// 1/temperature and renormalised), top_p, n, logprobs (0..20; chat: true
// with top_logprobs 0..20), echo, stop, seed, stream. Reported log-probabilities are those of the model, before
// temperature and top_p.
package llmtest
