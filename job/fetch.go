package job

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/hub"
)

// This file finds a published model's files by name (package hub): a
// {weights} left empty for a model genlens knows ({embedder}
// dinov2-vits14, e5-small-v2; {nli} deberta-large-mnli), or a Hugging
// Face model id (org/name) where a folder is expected.

// HubPrefix before a Hugging Face model id (hf:intfloat/e5-small-v2)
// makes it one, never read as a path.
const HubPrefix = "hf:"

// NoDownloads is the reason a job whose Env has no Fetch gives for not
// fetching a model by name, unless Env.NoFetch says another.
const NoDownloads = "models are not fetched by name here: give the model's folder or file"

// fetchOptions are the options of e's fetches, or the error of a job
// that may fetch none (Env.Fetch nil) for request field field.
func (e Env) fetchOptions(field, what string) (hub.Options, error) {
	if e.Fetch != nil {
		return *e.Fetch, nil
	}
	why := e.NoFetch
	if why == "" {
		why = NoDownloads
	}
	return hub.Options{}, fault.Fieldf(field, "{%s} %s: %s", field, what, why)
}

// ModelFolder returns the folder of a text model for request field
// field whose value is dir: dir itself when it exists; the snapshot of
// a Hugging Face model id (org/name, or HubPrefix and it) holding want,
// fetched once into the hub's cache; for an empty dir, the snapshot of the model name
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
	case strings.HasPrefix(dir, HubPrefix):
		repo = strings.TrimPrefix(dir, HubPrefix)
	default:
		if _, err := os.Stat(dir); err == nil || !hub.IsRepoID(dir) {
			return dir, notExist(field, dir, err)
		}
		repo = dir
	}
	opt, err := env.fetchOptions(field, repo)
	if err != nil {
		return "", err
	}
	folder, err := hub.Snapshot(ctx, repo, want, opt)
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
		if id, ok := strings.CutPrefix(path, HubPrefix); ok {
			path = id
		} else if _, err := os.Stat(path); err == nil || !hub.IsRepoID(path) {
			return path, notExist(field, path, err)
		}
		opt, err := env.fetchOptions(field, path)
		if err != nil {
			return "", err
		}
		dir, err := hub.Snapshot(ctx, path, []hub.Want{{Names: []string{file}}}, opt)
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
	opt, err := env.fetchOptions(field, "(empty, for "+name+")")
	if err != nil {
		return "", err
	}
	p, err := m.Fetch(ctx, opt)
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
