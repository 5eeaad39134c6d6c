#include "bus/limits.h"

#include <string>
#include <utility>

#include "base/quote.h"

namespace skillbox::bus {
namespace {

// How much of the skill's path the refusal quotes, in bytes (the workspace's own messages quote as much).
constexpr size_t kMaxQuotedBytes = 200;

}  // namespace

ErrorReply path_too_long(std::string_view op, std::string_view given) {
  std::string message(op);
  message += ' ';
  message += base::quote(given, kMaxQuotedBytes);  // reads only the bytes it quotes
  message += ": path is " + std::to_string(given.size()) + " bytes long; the limit is " +
             std::to_string(kMaxPathBytes);
  return ErrorReply{ErrorCode::InvalidArgument, std::move(message)};
}

}  // namespace skillbox::bus
