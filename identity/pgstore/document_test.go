package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/existence-loop/sdk/identity/pgstore"
	"github.com/existence-loop/sdk/identity/storetest"
	"github.com/existence-loop/sdk/internal/pgtest"
)

// TestVersion1DatabaseMigrates: a database of schema version 1 (no
// existence_documents table) opens, migrates to
// [pgstore.SchemaVersion] with its states intact, and then keeps
// documents.
func TestVersion1DatabaseMigrates(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	s := open(t, url, "a", 0)
	if err := s.Save(ctx, storetest.FullState("scout")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `DROP TABLE existence_documents; DELETE FROM existence_migrations WHERE version > 1`); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = open(t, url, "b", 0)
	var n int
	if err := s.Pool().QueryRow(ctx, `SELECT max(version) FROM existence_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != pgstore.SchemaVersion {
		t.Fatalf("schema version %d after open, want %d", n, pgstore.SchemaVersion)
	}
	if _, err := s.Load(ctx, "scout"); err != nil {
		t.Fatalf("state lost in the migration: %v", err)
	}
	doc := s.Document("requests")
	if data, err := doc.Load(ctx); err != nil || data != nil {
		t.Fatalf("Load = %q, %v; want nothing", data, err)
	}
	if err := doc.Update(ctx, func([]byte) ([]byte, error) { return []byte(`{"version":1}`), nil }); err != nil {
		t.Fatal(err)
	}
	if data, err := doc.Load(ctx); err != nil || string(data) != `{"version":1}` {
		t.Fatalf("Load = %q, %v", data, err)
	}
}

// TestDocumentUpdate: fn's error or nil data writes nothing; concurrent
// read-modify-writes from two stores lose no update (the row lock).
func TestDocumentUpdate(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	s1, s2 := open(t, url, "a", 0), open(t, url, "b", 0)
	doc := s1.Document("notes")
	if name := doc.Name(); !strings.HasPrefix(name, "postgres://") || !strings.HasSuffix(name, "#notes") || strings.Contains(name, "@") {
		t.Errorf("Name = %q", name)
	}
	refused := errors.New("refused")
	if err := doc.Update(ctx, func([]byte) ([]byte, error) { return []byte("x"), refused }); !errors.Is(err, refused) {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	if err := doc.Update(ctx, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if data, err := doc.Load(ctx); err != nil || data != nil {
		t.Fatalf("Load = %q, %v; want nothing written", data, err)
	}

	const each = 20
	var wg sync.WaitGroup
	for _, s := range []*pgstore.Store{s1, s2} {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := s.Document("notes")
				for range each {
					if err := d.Update(ctx, func(old []byte) ([]byte, error) { return append(old, '+'), nil }); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	data, err := s2.Document("notes").Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 4*each {
		t.Fatalf("%d updates kept, want %d", len(data), 4*each)
	}
}
