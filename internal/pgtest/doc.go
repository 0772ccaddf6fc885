// Package pgtest starts throwaway PostgreSQL servers for tests: the
// PostgreSQL store is tested against a real server, never a mock.
//
// [New] returns the connection string of a fresh, empty database. It uses
// the server named by $EXISTENCE_TEST_POSTGRES_URL when that is set;
// otherwise it starts a server of its own from the postgresql binaries
// (initdb and pg_ctl, found in /usr/lib/postgresql/*/bin or on $PATH) in a
// temporary directory, listening on a free loopback port and on a unix
// socket in that directory. The server is shared by the tests of one test
// binary when the package calls [Main] from TestMain (and stopped when they
// end); without Main each [New] starts and stops its own server through
// t.Cleanup. [Start] always starts a dedicated server.
//
// initdb refuses to run as root, so as root (as in CI) the server binaries
// run as the "postgres" user (or "nobody" when there is none) through
// setpriv, in a directory that user owns.
//
// When no server binaries are found, the test is skipped with one line:
// "install PostgreSQL: apt-get install -y postgresql".
//
// [Proxy] is a loopback TCP proxy that can cut traffic, for partition
// tests.
package pgtest
