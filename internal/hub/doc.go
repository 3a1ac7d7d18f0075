// Package hub fetches published model files into the caches their own
// ecosystems keep them in, so that a model is named, not hunted for: a
// file another tool already downloaded is used as it is, and a file
// genlens downloads is where that tool would look for it.
//
// Three sources are spoken: torch hub's checkpoints (a plain GET, kept in
// $TORCH_HOME/hub/checkpoints, default ~/.cache/torch/hub/checkpoints),
// OpenAI's CLIP releases (a plain GET whose URL carries the file's
// SHA-256, kept in ~/.cache/clip as clip.load keeps them), and the
// Hugging Face hub ({HF_ENDPOINT}/{repo}/resolve/{revision}/{file},
// kept in the hub's cache layout under $HF_HUB_CACHE or $HF_HOME/hub:
// models--{org}--{name}/blobs/{etag}, snapshots/{commit}/{file} linking
// to the blob, refs/main holding the commit).
//
// Every download goes through Download: into a ".incomplete" file beside
// the final one, resumed with a Range request when a partial file is
// there, checked against its SHA-256 when one is published (OpenAI's
// URL, the Hugging Face ETag of a large file), and renamed into place
// only when complete, so that no later run trusts a truncated or
// corrupted file. HF_HUB_OFFLINE=1 keeps every source off the network:
// cached files are used, a missing one is an error saying which file and
// where it comes from.
package hub
