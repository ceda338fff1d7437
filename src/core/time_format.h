// RFC 3339 timestamps and human durations, as the API and the command line write them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"

namespace boxoffice {

// "2026-11-30T19:10:00.000Z": UTC, always with milliseconds.
std::string FormatRfc3339(Instant t);

// Accepts "YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)"; fractions past milliseconds are cut.
// Returns nullopt for anything else, including impossible dates.
std::optional<Instant> ParseRfc3339(std::string_view text);

// "500ms", "15s", "10m", "1h", "2h30m". Returns nullopt on anything else or on zero
// components only ("0s" is allowed and means zero).
std::optional<Millis> ParseDuration(std::string_view text);

}  // namespace boxoffice
