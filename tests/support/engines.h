// The stores the contract and end-to-end suites run on, and their test names.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace boxoffice::testing {

// kSqlite: the embedded default; kPostgres: one PostgreSQL database; kShards: two
// PostgreSQL shards (each suite says how it builds them).
enum class Engine { kSqlite, kPostgres, kShards };

inline std::string EngineName(const ::testing::TestParamInfo<Engine>& info) {
  switch (info.param) {
    case Engine::kSqlite:
      return "Sqlite";
    case Engine::kPostgres:
      return "Postgres";
    case Engine::kShards:
      return "PostgresShards";
  }
  return "?";
}

// Every engine, for the suites that run on each.
inline auto AllEngines() {
  return ::testing::Values(Engine::kSqlite, Engine::kPostgres, Engine::kShards);
}

}  // namespace boxoffice::testing
