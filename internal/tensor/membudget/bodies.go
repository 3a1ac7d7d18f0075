package membudget

import (
	"context"
	"io"
	"sync"

	"golang.org/x/sync/semaphore"
)

// Bodies bounds the bytes of the request bodies a service reads and
// decodes at once. A JSON body decodes into many times its size (8 rows
// batches of 32 MB at once once held 5.8 GB), so a body is admitted only
// once the bodies in flight leave room for it. Unread bodies cost
// nothing but socket buffers, so a body waits for room (as long as its
// context allows) rather than being refused at once.
type Bodies struct {
	sem     *semaphore.Weighted
	maxBody int64
}

// NewBodies returns the bound of limit bytes of bodies in flight, for
// bodies of at most maxBody bytes: at least one body of the largest size;
// limit 0 means two of them (any number of small ones).
func NewBodies(limit, maxBody int64) *Bodies {
	if limit <= 0 {
		limit = 2 * maxBody
	}
	return &Bodies{sem: semaphore.NewWeighted(max(limit, maxBody)), maxBody: maxBody}
}

// Acquire waits for room for a body of n bytes until ctx ends (with
// ctx's error then), and returns the function that frees the room. A
// body of unknown length (n < 0) or over the largest is counted as the
// largest.
func (b *Bodies) Acquire(ctx context.Context, n int64) (release func(), err error) {
	if n < 0 || n > b.maxBody {
		n = b.maxBody
	}
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { b.sem.Release(n) }) }, nil
}

// AcquireRead is Acquire for a body that its reader reads whole into a
// byte slice and then decodes only in part (a proxy): the body it
// returns in place of body holds the room, which shrinks to twice the
// bytes read (the slice, and the text decoded from it) once the body
// ends (EOF, an error or Close), so that a long exchange after it, such
// as a stream, holds no more than its body costs. release frees what is
// left. On an error body is returned as it was.
func (b *Bodies) AcquireRead(ctx context.Context, body io.ReadCloser, n int64) (_ io.ReadCloser, release func(), err error) {
	if n < 0 || n > b.maxBody {
		n = b.maxBody
	}
	if err := b.sem.Acquire(ctx, n); err != nil {
		return body, nil, err
	}
	r := &heldBody{ReadCloser: body, sem: b.sem, held: n}
	return r, func() { r.release(0) }, nil
}

// heldBody is a body whose room among the bodies in flight shrinks to
// twice the bytes read at its end (EOF, an error or Close).
type heldBody struct {
	io.ReadCloser
	sem  *semaphore.Weighted
	mu   sync.Mutex
	held int64 // bytes of room held
	read int64
	done bool
}

func (b *heldBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	b.read += int64(n)
	read := b.read
	b.mu.Unlock()
	if err != nil {
		b.release(2 * read)
	}
	return n, err
}

func (b *heldBody) Close() error {
	b.mu.Lock()
	read := b.read
	b.mu.Unlock()
	b.release(2 * read)
	return b.ReadCloser.Close()
}

// release keeps at most keep bytes of room, once the body is done; 0
// frees them all, as the reader's handler ends.
func (b *heldBody) release(keep int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done && keep > 0 {
		return
	}
	b.done = true
	if keep < b.held {
		b.sem.Release(b.held - keep)
		b.held = keep
	}
}
