// Package trio is the roster of the reference system's three agents (spec
// §1): Cedar the scout, Cipher the analyst and Vault the builder. It is
// the one definition the command-line tool (existence run), the
// simulator (existence/simulate), examples/trio and the docs use.
//
// The ids and names are the original system's. The original drew each
// agent's traits and domains at random from fixed pools; the roster fixes
// one choice per role, in the pools' three-trait style, so that the three
// stay distinct from run to run.
package trio
