package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Serve serves s on ln (with HTTPServer's timeouts) until ctx is done,
// then shuts down: requests in flight get 15 s to finish, then Close
// stops the jobs and stores the proxy's queued records. s is closed when
// Serve returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := s.HTTPServer(ln.Addr().String())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		s.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	err = errors.Join(err, s.Close(sctx))
	if e := <-done; e != nil && !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	if err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	s.log.Info("stopped")
	return nil
}
