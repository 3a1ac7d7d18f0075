package membudget

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// fits reports whether n bytes more fit among the bodies in flight now.
func fits(b *Bodies, n int64) bool {
	if !b.sem.TryAcquire(n) {
		return false
	}
	b.sem.Release(n)
	return true
}

func TestBodiesAcquire(t *testing.T) {
	for _, c := range []struct {
		limit, maxBody int64
		want           int64 // the room
	}{
		{0, 100, 200},   // two of the largest
		{50, 100, 100},  // at least one of the largest
		{300, 100, 300}, // as set
	} {
		b := NewBodies(c.limit, c.maxBody)
		if !fits(b, c.want) || fits(b, c.want+1) {
			t.Errorf("NewBodies(%d, %d): want room for %d bytes", c.limit, c.maxBody, c.want)
		}
		// A body of unknown length, or over the largest, counts as the largest.
		release, err := b.Acquire(context.Background(), -1)
		if err != nil {
			t.Fatal(err)
		}
		if fits(b, c.want-c.maxBody+1) {
			t.Errorf("NewBodies(%d, %d): a body of unknown length held less than %d bytes", c.limit, c.maxBody, c.maxBody)
		}
		release()
		release() // a second call frees nothing more
		if !fits(b, c.want) || fits(b, c.want+1) {
			t.Errorf("NewBodies(%d, %d): after release, want room for %d bytes and no more", c.limit, c.maxBody, c.want)
		}
	}
}

// A body read whole keeps twice the bytes read until released, however
// much its length was counted; one never read to its end keeps its room
// until Close.
func TestBodiesAcquireRead(t *testing.T) {
	b := NewBodies(1000, 1000)
	body, release, err := b.AcquireRead(context.Background(), io.NopCloser(strings.NewReader("0123456789")), -1)
	if err != nil {
		t.Fatal(err)
	}
	if fits(b, 1) {
		t.Fatal("a body of unknown length held less than the largest")
	}
	if _, err := io.ReadAll(body); err != nil {
		t.Fatal(err)
	}
	if !fits(b, 980) || fits(b, 981) {
		t.Error("a body of 10 bytes read: want 20 bytes held")
	}
	body.Close() // after its end: nothing changes
	if !fits(b, 980) || fits(b, 981) {
		t.Error("a body of 10 bytes read and closed: want 20 bytes held")
	}
	release()
	if !fits(b, 1000) {
		t.Error("released: want all the room back")
	}

	body, release, err = b.AcquireRead(context.Background(), io.NopCloser(strings.NewReader("0123456789")), 500)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := body.Read(make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	if fits(b, 501) {
		t.Error("a body read in part: want its 500 bytes held")
	}
	body.Close()
	if !fits(b, 992) || fits(b, 993) {
		t.Error("a body closed after 4 bytes: want 8 bytes held")
	}
	release()
	if !fits(b, 1000) {
		t.Error("released: want all the room back")
	}

	// No room within the context: its error, and the body as it was.
	held, err := b.Acquire(context.Background(), 2000)
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	orig := io.NopCloser(strings.NewReader("x"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if got, _, err := b.AcquireRead(ctx, orig, 1); err == nil || got != orig {
		t.Errorf("no room: %v, body %v", err, got)
	}
}
