package docfile_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/existence-loop/sdk/internal/docfile"
)

type note struct {
	ID string `json:"id"`
}

type notes struct {
	Version int    `json:"version"`
	Notes   []note `json:"notes"`
}

// A package describes its file format once, then keeps the document in
// memory or in a file and changes it under Update.
func Example() {
	format := &docfile.Format[notes, note]{
		Version:  1,
		List:     "notes",
		Fields:   func(d *notes) (*int, *[]note) { return &d.Version, &d.Notes },
		ID:       func(n note) string { return n.ID },
		Validate: func(note) error { return nil },
		Corrupt: func(path, reason string, err error) error {
			return errors.New("corrupt " + path + ": " + reason)
		},
	}
	mem := docfile.NewMemory(format)
	sem := make(chan struct{}, 1)
	_ = docfile.Update(context.Background(), sem, docfile.Store[notes](mem), func(d *notes) error {
		d.Notes = append(d.Notes, note{ID: "n1"})
		return mem.Save(d)
	})
	d, _ := mem.Load()
	data, _ := format.Encode(d)
	fmt.Print(string(data))
	_, err := format.Decode([]byte(`{"version":1,"notes":[{"id":"a"},{"id":"a"}]}`), "notes.json")
	fmt.Println(err)
	// Output:
	// {
	//   "version": 1,
	//   "notes": [
	//     {
	//       "id": "n1"
	//     }
	//   ]
	// }
	// corrupt notes.json: notes[1]: duplicate id "a"
}
