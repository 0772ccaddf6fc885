package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/identity/pgstore"
	"github.com/existence-loop/sdk/internal/pgtest"
)

func TestSaveLoadList(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "a", 0)
	if _, err := s.Load(ctx, "scout"); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("Load of nothing: %v", err)
	}
	for _, id := range []string{"b-1", "a_2", "a-1", "scout"} {
		if err := s.Save(ctx, state(id, "I am "+id+" \x00 with a NUL")); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Load(ctx, "a_2")
	if err != nil {
		t.Fatal(err)
	}
	if got.Identity.Narrative != "I am a_2 \x00 with a NUL" || !got.UpdatedAt.Equal(t0) {
		t.Fatalf("loaded %+v", got.Identity)
	}
	ids, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a-1 a_2 b-1 scout"; strings.Join(ids, " ") != want {
		t.Fatalf("List = %v, want %s (byte order)", ids, want)
	}
	if _, err := s.Load(ctx, "../x"); !errors.Is(err, identity.ErrInvalidID) {
		t.Fatalf("Load of a bad id: %v", err)
	}
	bad := state("scout", "")
	bad.Identity.AgentID = "Bad Id"
	if err := s.Save(ctx, bad); !errors.Is(err, identity.ErrInvalidID) {
		t.Fatalf("Save of a bad id: %v", err)
	}
}

func TestLoadRefusesCorruptAndNewerDocuments(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "a", 0)
	for _, id := range []string{"trunc", "other", "newer", "nan"} {
		if err := s.Save(ctx, state(id, "")); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`UPDATE existence_states SET doc = substr(doc, 1, 20) WHERE agent_id = 'trunc'`,
		`UPDATE existence_states SET doc = convert_to(replace(convert_from(doc, 'UTF8'), '"other"', '"someone"'), 'UTF8') WHERE agent_id = 'other'`,
		`UPDATE existence_states SET doc_version = 99 WHERE agent_id = 'newer'`,
	} {
		if _, err := s.Pool().Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]error{"trunc": identity.ErrCorrupt, "other": identity.ErrCorrupt, "newer": identity.ErrFutureVersion} {
		_, err := s.Load(ctx, id)
		if !errors.Is(err, want) {
			t.Errorf("Load(%s) = %v, want %v", id, err, want)
		}
		t.Logf("%s: %v", id, err)
	}
}

func TestSaveTooLarge(t *testing.T) {
	ctx := context.Background()
	s, err := pgstore.Open(ctx, pgtest.New(t), pgstore.Options{MaxBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Save(ctx, state("big", strings.Repeat("x", 2000))); !errors.Is(err, identity.ErrTooLarge) {
		t.Fatalf("Save = %v, want ErrTooLarge", err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	tests := []struct {
		name string
		url  string
		want error
	}{
		{"bad connection string", "postgres://a b@:what", pgstore.ErrConfig},
		{"unreachable server", "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", pgstore.ErrUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := pgstore.Open(ctx, tt.url, pgstore.Options{ConnectTimeout: 3 * time.Second})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open = %v, want %v", err, tt.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Open took %v: retrying?", d)
			}
			t.Log(err)
		})
	}
	t.Run("newer schema", func(t *testing.T) {
		s := open(t, url, "a", 0)
		if _, err := s.Pool().Exec(ctx, `INSERT INTO existence_migrations (version) VALUES (99)`); err != nil {
			t.Fatal(err)
		}
		_, err := pgstore.Open(ctx, url, pgstore.Options{})
		if !errors.Is(err, pgstore.ErrSchemaTooNew) {
			t.Fatalf("Open = %v, want ErrSchemaTooNew", err)
		}
		t.Log(err)
	})
}

func TestConcurrentStartsMigrateOnce(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := pgstore.Open(ctx, url, pgstore.Options{Owner: fmt.Sprint(i)})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	s := open(t, url, "check", 0)
	var n int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM existence_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != pgstore.SchemaVersion {
		t.Fatalf("%d migrations recorded, want %d", n, pgstore.SchemaVersion)
	}
}
