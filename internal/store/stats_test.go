package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// TestStatsPartsConcurrentReplicas posts the parts of one name through
// two handles on one database (two replicas), eight goroutines each,
// every part twice: every shard is held once, every second copy is a
// duplicate, and nothing is lost. Runs on SQLite, and on Postgres when
// GENLENS_TEST_POSTGRES is set.
func TestStatsPartsConcurrentReplicas(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.DSN(t)
			var dbs []*store.DB
			for range 2 {
				db, err := store.Open(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				dbs = append(dbs, db)
			}
			const k = 24
			part := func(i int) records.StatsPart {
				return records.StatsPart{Name: "real", Shard: i, Shards: k, Input: "folder 1000 abc", SHA256: fmt.Sprintf("sum%d", i),
					N: 10 + i, Data: []byte(fmt.Sprintf("part %d", i)), Created: time.Unix(1, 0)}
			}
			var mu sync.Mutex
			dups, errs := 0, []error{}
			var wg sync.WaitGroup
			for g := range 16 {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					db := dbs[g%2]
					for i := g % 8; i < k; i += 8 {
						dup, err := db.PutStatsPart(ctx, part(i))
						mu.Lock()
						if dup {
							dups++
						}
						if err != nil {
							errs = append(errs, err)
						}
						mu.Unlock()
					}
				}(g)
			}
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("%d errors, first %v", len(errs), errs[0])
			}
			if dups != k {
				t.Errorf("%d duplicates, want %d (each part sent twice)", dups, k)
			}
			s, err := dbs[0].GetStatsSet(ctx, "real")
			if err != nil {
				t.Fatal(err)
			}
			wantN := 0
			for i := 0; i < k; i++ {
				wantN += 10 + i
			}
			if len(s.Have) != k || s.N != wantN || s.Shards != k {
				t.Fatalf("held %v (n %d), want all %d shards (n %d)", s.Have, s.N, k, wantN)
			}
			var seen []int
			if err := dbs[1].StatsParts(ctx, "real", func(p records.StatsPart) error {
				if string(p.Data) != fmt.Sprintf("part %d", p.Shard) {
					t.Errorf("shard %d holds %q", p.Shard, p.Data)
				}
				seen = append(seen, p.Shard)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for i, s := range seen {
				if s != i {
					t.Fatalf("parts in order %v, want 0..%d", seen, k-1)
				}
			}

			// Another part for a held shard; a part of other inputs.
			other := part(3)
			other.SHA256, other.Data = "different", []byte("x")
			if _, err := dbs[0].PutStatsPart(ctx, other); !errors.Is(err, records.ErrConflict) {
				t.Errorf("different part of a held shard: %v, want ErrConflict", err)
			}
			foreign := part(3)
			foreign.Input = "folder 999 abd"
			if _, err := dbs[1].PutStatsPart(ctx, foreign); !errors.Is(err, records.ErrMismatch) {
				t.Errorf("part of another input: %v, want ErrMismatch", err)
			}
			foreign = part(3)
			foreign.Shards = k + 1
			if _, err := dbs[1].PutStatsPart(ctx, foreign); !errors.Is(err, records.ErrMismatch) {
				t.Errorf("part of another shard count: %v, want ErrMismatch", err)
			}
			if _, err := dbs[0].GetStatsSet(ctx, "nothing"); !errors.Is(err, records.ErrNotFound) {
				t.Errorf("unknown name: %v, want ErrNotFound", err)
			}
		})
	}
}
