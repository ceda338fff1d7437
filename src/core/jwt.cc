#include "core/jwt.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "core/crypto.h"
#include "core/strict_json.h"
#include "core/text.h"

namespace boxoffice {
namespace {

Status Bad(const char* why) { return Status(Code::kInvalid, why); }

std::optional<nlohmann::json> DecodePart(std::string_view part) {
  auto raw = Base64UrlDecode(part);
  if (!raw) return std::nullopt;
  // Strict: a header or claims set naming a key twice is refused (RFC 7515 4, RFC 7519 4).
  std::string why;
  auto j = ParseStrictJson(*raw, &why);
  if (!j || !j->is_object()) return std::nullopt;
  return j;
}

// True when the scope claim (a space-separated string, or an array of strings) names it.
bool ScopeHas(const nlohmann::json& scope, std::string_view name) {
  if (scope.is_string()) {
    const std::string& s = scope.get_ref<const std::string&>();
    size_t pos = 0;
    while (pos <= s.size()) {
      size_t end = s.find(' ', pos);
      if (end == std::string::npos) end = s.size();
      if (s.compare(pos, end - pos, name) == 0) return true;
      pos = end + 1;
    }
    return false;
  }
  if (scope.is_array()) {
    for (const auto& item : scope) {
      if (item.is_string() && item.get_ref<const std::string&>() == name) return true;
    }
  }
  return false;
}

}  // namespace

Result<Principal> VerifyJwt(std::string_view token, std::string_view secret, Instant now) {
  if (token.size() > kMaxJwtLength) return Bad("token too long");
  const size_t dot1 = token.find('.');
  if (dot1 == std::string_view::npos) return Bad("malformed token");
  const size_t dot2 = token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return Bad("malformed token");
  }
  auto header = DecodePart(token.substr(0, dot1));
  if (!header) return Bad("malformed token header");
  const auto alg = header->find("alg");
  if (alg == header->end() || !alg->is_string() || alg->get<std::string>() != "HS256") {
    return Bad("unsupported token algorithm");
  }
  // RFC 7515 4.1.11: a recipient must refuse extensions it does not understand; we
  // understand none, so any `crit` (even an empty one, which the RFC forbids) is refused.
  if (header->contains("crit")) return Bad("token header has critical extensions");
  auto signature = Base64UrlDecode(token.substr(dot2 + 1));
  if (!signature) return Bad("malformed token signature");
  const std::string expected = HmacSha256(secret, token.substr(0, dot2));
  if (!ConstantTimeEquals(*signature, expected)) return Bad("bad token signature");

  auto claims = DecodePart(token.substr(dot1 + 1, dot2 - dot1 - 1));
  if (!claims) return Bad("malformed token claims");
  const auto exp = claims->find("exp");
  if (exp == claims->end() || !exp->is_number()) return Bad("token has no exp");
  const double exp_s = exp->get<double>();
  if (!(exp_s * 1000.0 + static_cast<double>(kJwtLeeway.count()) >
        static_cast<double>(ToEpochMs(now)))) {
    return Bad("token expired");
  }
  if (const auto nbf = claims->find("nbf"); nbf != claims->end()) {
    if (!nbf->is_number()) return Bad("token nbf is not a time");
    if (nbf->get<double>() * 1000.0 - static_cast<double>(kJwtLeeway.count()) >
        static_cast<double>(ToEpochMs(now))) {
      return Bad("token not yet valid");
    }
  }
  const auto sub = claims->find("sub");
  if (sub == claims->end() || !sub->is_string()) return Bad("token has no sub");
  const std::optional<int64_t> customer = ParseDecimalId(sub->get_ref<const std::string&>());
  if (!customer) return Bad("token sub is not a customer id");
  Principal who;
  who.customer_id = *customer;
  if (auto scope = claims->find("scope"); scope != claims->end()) {
    who.admin = ScopeHas(*scope, "admin");
    who.door = who.admin || ScopeHas(*scope, "door");
  }
  // An address we cannot send to (international, quoted, not a string) is left out: the
  // customer is still who they are, and checkout may take an address from its body.
  if (auto email = claims->find("email"); email != claims->end()) {
    if (email->is_string() && IsValidEmail(email->get_ref<const std::string&>())) {
      who.email = email->get<std::string>();
    }
  }
  return who;
}

std::string SignJwt(const Principal& who, Instant expires_at, std::string_view secret) {
  nlohmann::json claims = {{"sub", std::to_string(who.customer_id)},
                           {"exp", ToEpochMs(expires_at) / 1000}};
  if (who.admin) {
    claims["scope"] = "admin";
  } else if (who.door) {
    claims["scope"] = "door";
  }
  if (!who.email.empty()) claims["email"] = who.email;
  const std::string signing_input =
      Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})") + "." + Base64UrlEncode(claims.dump());
  return signing_input + "." + Base64UrlEncode(HmacSha256(secret, signing_input));
}

}  // namespace boxoffice
