// Where the tests find their engines: PostgreSQL from BOXOFFICE_TEST_PG_URL (set by
// scripts/with-postgres.sh), files under a fresh temporary directory.
#pragma once

#include <string>

namespace boxoffice::testing {

// The URL of a throwaway PostgreSQL database, or "" when none was started. With
// BOXOFFICE_TEST_REQUIRE_PG=1 (as `make test` sets it) a missing URL fails the test.
std::string PostgresUrl();
bool PostgresRequired();

// A new empty directory under $TMPDIR, removed at process exit.
std::string TempDir();

// A TCP port on 127.0.0.1 that was free a moment ago, for a process that must listen on
// the same port across restarts.
unsigned short FreePort();

}  // namespace boxoffice::testing

namespace boxoffice::testing {

// A URL for PostgresUrl() whose search_path is a brand-new schema, so each test starts
// from an empty database without the cost of CREATE DATABASE.
std::string FreshPostgresSchemaUrl();

}  // namespace boxoffice::testing
