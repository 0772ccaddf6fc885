// Package repeat holds the text side of the goal-repeat rule: a new goal
// whose objective shares at least [Threshold] (0.9) of its distinct words
// with one of the last [Window] (10) goals the agent chose repeats it, the
// agent going round in circles (package existence reports it and counts it
// toward the repeated_failure assessment, spec §4; existence/simulate
// scripts models that avoid it).
//
// [Similarity] is the token-set (Jaccard) similarity of two objectives over
// their [Tokens]; [Hashes] and [Jaccard] compute the same on hashed sets
// without a map per goal, for the cycle's path.
package repeat
