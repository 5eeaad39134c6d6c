// bindings/bridge.h — how bindings reach the host: the typed request bus of the running invocation.
//
// Bindings never touch files, sockets or SQLite. A binding checks its JS arguments, converts each one
// once into a plain C++ value, builds a bus::Request and sends it through the Bridge of the invocation
// running in its JSContext. The engine implements Bridge (engine/session.*) and installs it as the
// context opaque before any binding is installed.
#pragma once

#include <quickjs.h>

#include <string>

#include "bus/messages.h"

namespace skillbox::bindings {

/// Converts a successful (non-ErrorReply) reply into a JS value of `ctx`. Returns JS_EXCEPTION with a
/// pending exception if the reply cannot be represented (e.g. invalid JSON from the store).
using ReplyDecoder = JSValue (*)(JSContext* ctx, bus::Reply& reply);

class Bridge {
 public:
  virtual ~Bridge() = default;

  /// Sends `request` and returns its reply synchronously (log, store, env). Counts as one host call.
  virtual bus::Reply call(bus::Request request) = 0;

  /// Sends `request` and returns a new promise of `ctx`. When the reply arrives (possibly on a later
  /// turn of the event loop), an ErrorReply rejects the promise with make_host_error(), any other reply
  /// resolves it with decode(ctx, reply). If the invocation ends first the promise never settles and
  /// the request is cancelled. Returns JS_EXCEPTION (pending exception) if the promise cannot be made.
  virtual JSValue call_async(JSContext* ctx, bus::Request request, ReplyDecoder decode) = 0;

  /// Sends an asynchronous request (http) and blocks the JS thread until its reply arrives: the
  /// synchronous `net.fetch` of OpenHuman bundles (docs/openhuman.md). The wait ends at the
  /// invocation's deadline (an ErrorReply{Timeout}) or when a limit trips; replies of other requests
  /// that arrive meanwhile are kept for the event loop. Counts as one host call. The default, for
  /// bridges without an event loop (test doubles), refuses with IoError.
  virtual bus::Reply call_blocking(bus::Request /*request*/) {
    return bus::ErrorReply{bus::ErrorCode::IoError, "this host cannot wait for a request synchronously"};
  }
  /// Called by make_host_error() for each host error it makes: the new error object and its code
  /// (bus::error_errno). The engine remembers which objects the host made, so that a run's
  /// `error.code` comes only from the host and never from a `code` property the skill wrote
  /// (engine::Session::describe). The default, for test doubles, remembers nothing.
  virtual void note_host_error(JSContext* /*ctx*/, JSValueConst /*error*/, const char* /*code*/) {}
  /// True once a limit of the invocation has tripped (deadline, steps, memory, stack, cancel): from
  /// then on no skill code may run, so a host error is not thrown as an Error the skill could catch
  /// but as the engine's uncatchable interrupt (make_host_error). The default, for test doubles: never.
  virtual bool stopping() { return false; }
  /// Called with the text of each log line before it is sent: the engine rewrites stack frames of a
  /// built file to the file it was built from (engine/source_map.h), as it does for the run's error.
  /// The default, for test doubles: the text as it is.
  virtual void rewrite_log_text(std::string& /*text*/) {}
};

/// The Bridge of the invocation running in `ctx` (the context opaque set by the engine).
Bridge& bridge(JSContext* ctx);

/// A new Error object of `ctx`'s realm (so its constructor chain is the skill's own) with
/// `name` = error_name(code), `code` = error_errno(code) and `message`. Never fails silently: on OOM
/// it returns JS_EXCEPTION. Once the invocation is stopping (Bridge::stopping) it makes no error and
/// returns JS_EXCEPTION with the uncatchable interrupt pending: after a limit, no `catch`, `finally`
/// or rejection handler of the skill may see a reply (docs/limits.md "Nothing happens after a limit").
JSValue make_host_error(JSContext* ctx, const bus::ErrorReply& error);

/// Throws make_host_error(ctx, error) in ctx and returns JS_EXCEPTION.
JSValue throw_host_error(JSContext* ctx, const bus::ErrorReply& error);

}  // namespace skillbox::bindings
