package job

import (
	"context"
	"errors"
	"os"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/hub"
)

// This file finds a published model's files by name (package hub): a
// {weights} left empty for a model genlens knows ({embedder}
// dinov2-vits14, e5-small-v2; {nli} deberta-large-mnli), or a Hugging
// Face model id (org/name) where a folder is expected.

// NoDownloads is the reason a job without Env.Fetch gives for not
// downloading a model.
const NoDownloads = "this run downloads no models"

// fetchOptions are the options of e's fetches: Env.Fetch, else the
// caches only.
func (e Env) fetchOptions() hub.Options {
	if e.Fetch != nil {
		return *e.Fetch
	}
	return hub.Options{Offline: NoDownloads}
}

// ModelFolder returns the folder of a text model for request field
// field whose value is dir: dir itself when it exists; the snapshot of
// a Hugging Face model id (org/name) holding want, fetched once into
// the hub's cache; for an empty dir, the snapshot of the model name
// stands for (hub.Lookup), "" when name is not a published model. A
// path that neither exists nor is a model id is an error saying so.
func ModelFolder(ctx context.Context, env Env, field, name, dir string, want []hub.Want) (string, error) {
	repo := ""
	switch {
	case dir == "":
		m, ok := hub.Lookup(name)
		if !ok || m.Repo == "" {
			return "", nil
		}
		repo = m.Repo
	default:
		if _, err := os.Stat(dir); err == nil || !hub.IsRepoID(dir) {
			return dir, notExist(field, dir, err)
		}
		repo = dir
	}
	folder, err := hub.Snapshot(ctx, repo, want, env.fetchOptions())
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return "", err
		}
		return "", fault.Fieldf(field, "{%s} %s: %v", field, repo, err)
	}
	return folder, nil
}

// WeightsFile returns the weights file of an image network for request
// field field whose value is path: path itself when it exists; file of
// the snapshot of a Hugging Face model id; for an empty path, the
// published file of the model called name (hub.Lookup), fetched once
// into its cache, "" when there is none.
func WeightsFile(ctx context.Context, env Env, field, name, path, file string) (string, error) {
	if path != "" {
		if _, err := os.Stat(path); err == nil || !hub.IsRepoID(path) {
			return path, notExist(field, path, err)
		}
		dir, err := hub.Snapshot(ctx, path, []hub.Want{{Names: []string{file}}}, env.fetchOptions())
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return "", err
			}
			return "", fault.Fieldf(field, "{%s} %s: %v", field, path, err)
		}
		return dir + string(os.PathSeparator) + file, nil
	}
	m, ok := hub.Lookup(name)
	if !ok || m.URL == "" {
		return "", nil
	}
	p, err := m.Fetch(ctx, env.fetchOptions())
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return "", err
		}
		return "", fault.Fieldf(field, "{%s}: %v", field, err)
	}
	return p, nil
}

// notExist is the error of a path the user gave that is not there (err
// from its os.Stat), nil when it is.
func notExist(field, path string, err error) error {
	if err == nil {
		return nil
	}
	msg := "cannot read: " + dataio.Cause(err)
	if errors.Is(err, os.ErrNotExist) {
		msg = "does not exist (nor is it a Hugging Face model id, org/name)"
	}
	return &fault.InputError{File: path, Msg: msg, Err: err}
}
