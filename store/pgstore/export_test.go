package pgstore

// QueuedSaves returns the saves waiting for a group commit (not yet taken
// by one), so that tests can tell when a batch has gathered.
func QueuedSaves(s *Store) int {
	if s.saves == nil {
		return 0
	}
	return s.saves.len()
}
