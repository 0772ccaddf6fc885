package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/suffering"
)

// A Store keeps one JSON document per agent; saves are atomic and
// durable, and the state comes back exactly after a restart.
func ExampleStore() {
	dir, err := os.MkdirTemp("", "state")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	now := time.Date(2026, 11, 21, 22, 23, 0, 0, time.UTC)

	store, err := filestore.Open(filepath.Join(dir, "trio"), filestore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", now)}
	st.Identity.SetWorldview("Maps before moves.", identity.Limits{})
	stressor := suffering.Input{Type: "Repeated Failure", Description: "goals keep failing", Condition: "complete goals"}
	if _, err := st.Suffering.Add(now, stressor); err != nil {
		log.Fatal(err)
	}
	if err := store.Save(ctx, st); err != nil {
		log.Fatal(err)
	}

	// Later, perhaps in another process:
	store, err = filestore.Open(filepath.Join(dir, "trio"), filestore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ids, _ := store.List(ctx)
	got, err := store.Load(ctx, "scout")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ids)
	fmt.Println(got.Identity.Name, "—", got.Identity.Worldview)
	fmt.Println(got.Suffering.Active[0].Type, got.Suffering.Active[0].Severity)

	_, err = store.Load(ctx, "vault")
	fmt.Println(errors.Is(err, identity.ErrNotFound))
	// Output:
	// [scout]
	// Cedar — Maps before moves.
	// repeated_failure 0.2
	// true
}

// A corrupt document is never overwritten: Load names the file and the
// reason, Save refuses, and Quarantine moves the file aside (it deletes
// nothing) so that the agent can start again.
func ExampleStore_Quarantine() {
	dir, err := os.MkdirTemp("", "state")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	now := time.Date(2026, 11, 21, 22, 23, 0, 0, time.UTC)
	store, err := filestore.Open(dir, filestore.Options{Now: func() time.Time { return now }})
	if err != nil {
		log.Fatal(err)
	}
	// A crash of a tool that does not write atomically left half a file.
	if err := os.WriteFile(store.Path("scout"), []byte(`{"schema_version": 1, "state": {"identity": {"agent_`), 0o600); err != nil {
		log.Fatal(err)
	}

	_, err = store.Load(ctx, "scout")
	var ce *identity.CorruptError
	if errors.As(err, &ce) {
		fmt.Println("load:", filepath.Base(ce.Path), "-", ce.Reason)
	}
	fresh := &identity.AgentState{Identity: identity.New("scout", "Cedar", now)}
	err = store.Save(ctx, fresh)
	fmt.Println("save refused:", errors.Is(err, identity.ErrCorrupt))

	moved, err := store.Quarantine("scout")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("moved to:", filepath.Base(moved))
	fmt.Println("save:", store.Save(ctx, fresh))
	// Output:
	// load: scout.json - truncated JSON: input ends after 52 bytes
	// save refused: true
	// moved to: scout.json.corrupt-20261121T222300Z
	// save: <nil>
}

// One process per agent: hold the agent's lock for the whole run. A second
// holder gets a LockedError naming the running process.
func ExampleStore_Lock() {
	dir, err := os.MkdirTemp("", "state")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := filestore.Open(dir, filestore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	unlock, err := store.Lock("scout")
	if err != nil {
		log.Fatal(err) // e.g. agent "scout" is already running (pid 1234)
	}
	defer unlock()

	_, err = store.Lock("scout")
	var le *identity.LockedError
	fmt.Println(errors.Is(err, identity.ErrLocked), errors.As(err, &le) && le.PID == os.Getpid())
	// Output:
	// true true
}
