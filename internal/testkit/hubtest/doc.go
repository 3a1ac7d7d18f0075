// Package hubtest is a fake Hugging Face hub for tests: it speaks the
// hub's file protocol (HEAD and GET of {repo}/resolve/{revision}/{file},
// a small file answered in place with its git ETag, a large one with a
// 302 to a CDN path carrying X-Linked-Etag, its SHA-256, and
// X-Linked-Size; X-Repo-Commit on both; byte ranges on the CDN), so that
// fetching models by name is tested without the network.
package hubtest
