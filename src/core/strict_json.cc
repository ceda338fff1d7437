#include "core/strict_json.h"

#include <algorithm>
#include <vector>

namespace boxoffice {

std::optional<nlohmann::json> ParseStrictJson(std::string_view text, std::string* why) {
  using nlohmann::json;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    *why = "a JSON text must not start with a byte-order mark";
    return std::nullopt;
  }
  if (text.find('\0') != std::string_view::npos) {
    *why = "a JSON text must be exactly one value (it holds a NUL byte)";
    return std::nullopt;
  }
  // The keys of each object being parsed, innermost last. Objects are small (a request's
  // fields), so a linear search beats a set.
  std::vector<std::vector<std::string>> open_objects;
  bool duplicate = false;
  json::parser_callback_t on_event = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        open_objects.emplace_back();
        break;
      case json::parse_event_t::key: {
        auto& keys = open_objects.back();
        const auto& key = parsed.get_ref<const std::string&>();
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
          duplicate = true;
        } else {
          keys.push_back(key);
        }
        break;
      }
      case json::parse_event_t::object_end:
        open_objects.pop_back();
        break;
      default:
        break;
    }
    return true;
  };
  json value = json::parse(text.begin(), text.end(), on_event, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    *why = "not valid JSON";
    return std::nullopt;
  }
  if (duplicate) {
    *why = "an object names the same key twice";
    return std::nullopt;
  }
  return value;
}

}  // namespace boxoffice
