// bindings/format.h — turning the arguments of log()/console.*() into one line of text, on a budget.
//
// Output, per argument, separated by spaces (like console.log):
//   strings raw at the top level; numbers as JS prints them (-0 as "-0"); 12n; true; null; undefined;
//   Symbol(desc); [Function: name]; errors as "Name: message" ([Name: message] when nested);
//   arrays and objects as compact JSON ([1,"a"], {"k":1}); inside them strings are JSON-quoted, and
//   values JSON has no form for are shown as above; typed arrays as Uint8Array(3) [1,2,3]; dates (any
//   object with toJSON) as what toJSON returns; [Circular] for a reference back into the path;
//   [Object]/[Array] past the depth cap; ",... N more" past the entry cap; [Map], [Set], [Promise],
//   [ArrayBuffer: N bytes], /re/g for other built-ins.
// A first argument that is a string may hold console substitutions: %s %d %i %f %j %o %O %c %%.
//
// Which skill code runs: objects are read like JSON.stringify reads them: own enumerable string keys
// (Object.keys, so a Proxy's ownKeys/getOwnPropertyDescriptor traps run), each value read once with
// [[Get]] (getters and get traps run), and toJSON called when present (its result is shown, and is not
// asked for toJSON again, so a toJSON returning itself or a fresh object with a toJSON ends at once).
// All of that is skill code running under the step limit and deadline. An exception it throws is
// shown in place ([Getter threw] for a property read, [toJSON threw] for the call, [Keys threw] for
// listing keys) and formatting goes on; the
// uncatchable exception of an interrupted run stops formatting and propagates.
//
// The budget: output stops growing once it passes FormatLimits::max_bytes (cut on a UTF-8 character
// boundary, so a cut output is longer than max_bytes by 1 to 4 bytes and a consumer can tell it was
// cut); no skill code runs after that. Depth, entries per container, keys listed and values visited
// are capped too, so the work per message is bounded even for a structure with a million shared
// references.
#pragma once

#include <quickjs.h>

#include <cstddef>
#include <string>

namespace skillbox::bindings {

struct FormatLimits {
  /// Output bytes before formatting stops. The log binding uses the log capability's message cap.
  size_t max_bytes = size_t{8} * 1024;
  /// Nesting shown: deeper containers print as [Object]/[Array]. 6 levels show typical API
  /// responses whole while keeping one line readable.
  int max_depth = 6;
  /// Elements/properties shown per array or object; the rest is counted (",... 900 more").
  size_t max_entries = 100;
  /// Own keys QuickJS may list for one message, summed over all objects. Listing the keys of an object
  /// is native work that the step limit does not see; this bounds it (objects past it print [Object]).
  size_t max_keys_listed = 100'000;
  /// Values formatted for one message. Every value writes at least one byte, so max_bytes bounds this
  /// already; the cap is a second fence for values whose reading runs skill code.
  size_t max_values = 20'000;
};

/// Formats `argc` values as one log message into `out` (appending). Returns false with an exception
/// pending only when formatting must not go on: the run was interrupted (step limit, deadline) while
/// skill code ran, or the host ran out of memory.
[[nodiscard]] bool format_log_message(JSContext* ctx, int argc, JSValueConst* argv,
                                      const FormatLimits& limits, std::string& out);

}  // namespace skillbox::bindings
