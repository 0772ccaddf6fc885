package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/sqlitestore"
)

// A Store keeps every agent's state in one SQLite file; a save is durable
// when it returns, and the state comes back exactly after a restart.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "sqlitestore")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	path := filepath.Join(dir, "agents.db")
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

	store, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", now)}
	st.Identity.SetWorldview("Maps before moves.", identity.Limits{})
	if err := store.Save(ctx, st); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("saves %d\n", store.Stats().Saves)
	store.Close()

	// Later, perhaps in another process:
	store, err = sqlitestore.Open(ctx, path, sqlitestore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ids, _ := store.List(ctx)
	got, err := store.Load(ctx, "scout")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ids)
	fmt.Println(got.Identity.Name, "—", got.Identity.Worldview)
	_, err = store.Load(ctx, "vault")
	fmt.Println(errors.Is(err, identity.ErrNotFound))
	// Output:
	// saves 1
	// [scout]
	// Cedar — Maps before moves.
	// true
}
