// bindings/fs.cpp — `openhuman.fs`: JS arguments in, typed fs requests out, replies back as JS values.
#include "bindings/fs.h"

#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "base/utf8_decoder.h"
#include "bindings/args.h"
#include "bindings/bridge.h"
#include "bindings/function_list.h"
#include "bindings/owners.h"
#include "bindings/values.h"
#include "bus/limits.h"

namespace skillbox::bindings {
namespace {

using bus::kMaxPathBytes;

// ---- arguments ------------------------------------------------------------------------------------

/// A path argument, converted once. Only a string primitive is accepted; its bytes are kept exactly as
/// QuickJS gives them (a lone surrogate stays an invalid sequence), so that the workspace's one path
/// checker decides about every malformed path alike (InvalidArgument).
struct PathArg {
  std::string value;
  std::optional<bus::ErrorReply> refused;  // too long to copy: the capability's own refusal
};

bool to_path(const Args& args, int index, std::string_view name, std::string_view op, PathArg& out) {
  JSContext* ctx = args.ctx();
  const JSValueConst value = args[index];
  if (!JS_IsString(value)) {
    throw_wrong_type(ctx, args.where(name), "a string", value);
    return false;
  }
  const CString bytes(ctx, value);  // a string primitive: runs no JS
  if (!bytes.ok()) return false;
  const size_t size = bytes.size();
  const std::string_view text = bytes.view();
  if (size > kMaxPathBytes) {
    // The wire limit, with the workspace's own message; it quotes only a prefix: no host copy of the rest.
    out.refused = bus::path_too_long(op, text);
  } else {
    out.value.assign(text);
  }
  return true;
}

/// A promise of ctx already rejected with the host error `error`.
JSValue rejected(JSContext* ctx, const bus::ErrorReply& error) {
  JSValue funcs[2];
  Value promise(ctx, JS_NewPromiseCapability(ctx, funcs));
  if (promise.is_exception()) return JS_EXCEPTION;  // no resolving functions were made
  const Value resolve(ctx, funcs[0]);
  const Value reject(ctx, funcs[1]);
  const Value reason(ctx, make_host_error(ctx, error));
  if (reason.is_exception()) return JS_EXCEPTION;
  JSValueConst argv[] = {reason.get()};
  const Value result(ctx, JS_Call(ctx, reject.get(), JS_UNDEFINED, 1, argv));
  if (result.is_exception()) return JS_EXCEPTION;
  return promise.release();
}

/// Sends `request` unless a path was refused while converting it.
JSValue send(JSContext* ctx, std::initializer_list<const PathArg*> paths, bus::Request request,
             ReplyDecoder decode) {
  for (const PathArg* path : paths) {
    if (path->refused) return rejected(ctx, *path->refused);
  }
  return bridge(ctx).call_async(ctx, std::move(request), decode);
}

// ---- replies --------------------------------------------------------------------------------------

JSValue wrong_reply(JSContext* ctx) {
  return JS_ThrowInternalError(ctx, "openhuman.fs: unexpected reply");
}

JSValue decode_undefined(JSContext* ctx, bus::Reply& reply) {
  return std::holds_alternative<bus::OkReply>(reply) ? JS_UNDEFINED : wrong_reply(ctx);
}

JSValue decode_boolean(JSContext* ctx, bus::Reply& reply) {
  const auto* value = std::get_if<bus::BoolReply>(&reply);
  return value ? JS_NewBool(ctx, value->value) : wrong_reply(ctx);
}

// readFile as text: the WHATWG UTF-8 decode (what TextDecoder does), except that a leading BOM is kept,
// as Node's readFile keeps it. Invalid sequences become U+FFFD.
JSValue decode_utf8(JSContext* ctx, bus::Reply& reply) {
  const auto* bytes = std::get_if<bus::BytesReply>(&reply);
  if (!bytes) return wrong_reply(ctx);
  return new_string_from_bytes(ctx, bytes->data.data(), bytes->data.size(), /*ignore_bom=*/true);
}

JSValue decode_binary(JSContext* ctx, bus::Reply& reply) {
  const auto* bytes = std::get_if<bus::BytesReply>(&reply);
  if (!bytes) return wrong_reply(ctx);
  return new_uint8_array(ctx, bytes->data.data(), bytes->data.size());
}

const char* type_name(bus::FsEntryType type) {
  switch (type) {
    case bus::FsEntryType::file:
      return "file";
    case bus::FsEntryType::directory:
      return "directory";
    case bus::FsEntryType::other:
      return "other";
  }
  return "other";
}

// Properties are defined, not set: a setter the skill put on Object.prototype never runs. Takes
// `value` on every path.
bool define(JSContext* ctx, JSValueConst object, const char* key, Value value) {
  if (value.is_exception()) return false;  // making the value ran out of memory
  return JS_DefinePropertyValueStr(ctx, object, key, value.release(), JS_PROP_C_W_E) >= 0;
}

JSValue decode_readdir(JSContext* ctx, bus::Reply& reply) {
  const auto* listing = std::get_if<bus::FsReaddirReply>(&reply);
  if (!listing) return wrong_reply(ctx);
  Value array(ctx, JS_NewArray(ctx));
  if (array.is_exception()) return JS_EXCEPTION;
  uint32_t index = 0;
  for (const bus::FsDirEntry& entry : listing->entries) {
    Value item(ctx, JS_NewObject(ctx));
    if (item.is_exception()) return JS_EXCEPTION;
    if (!define(ctx, item.get(), "name", Value(ctx, new_string(ctx, entry.name))) ||
        !define(ctx, item.get(), "type", Value(ctx, JS_NewString(ctx, type_name(entry.type)))))
      return JS_EXCEPTION;
    // Consumes `item`, also on failure.
    if (JS_DefinePropertyValueUint32(ctx, array.get(), index++, item.release(), JS_PROP_C_W_E) < 0)
      return JS_EXCEPTION;
  }
  return array.release();
}

JSValue decode_stat(JSContext* ctx, bus::Reply& reply) {
  const auto* stat = std::get_if<bus::FsStatReply>(&reply);
  if (!stat) return wrong_reply(ctx);
  Value object(ctx, JS_NewObject(ctx));
  if (object.is_exception()) return JS_EXCEPTION;
  if (!define(ctx, object.get(), "type", Value(ctx, JS_NewString(ctx, type_name(stat->type)))) ||
      !define(ctx, object.get(), "size", Value(ctx, JS_NewFloat64(ctx, static_cast<double>(stat->size)))) ||
      !define(ctx, object.get(), "mtimeMs", Value(ctx, JS_NewFloat64(ctx, stat->mtime_ms))))
    return JS_EXCEPTION;
  return object.release();
}

// ---- the functions ----------------------------------------------------------------------------------

JSValue js_read_file(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "openhuman.fs.readFile", argc, argv);
  PathArg path;
  Options options;
  bus::FsReadFileRequest request;
  if (!to_path(args, 0, "path", "readFile", path) || !args.options(1, "options", options) ||
      !options.enumeration("encoding", {{"utf8", bus::FsEncoding::utf8}, {"binary", bus::FsEncoding::binary}},
                           request.encoding))
    return JS_EXCEPTION;
  request.path = std::move(path.value);
  const ReplyDecoder decode = request.encoding == bus::FsEncoding::binary ? decode_binary : decode_utf8;
  return send(ctx, {&path}, std::move(request), decode);
}

JSValue js_write_file(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv, int append) {
  const Args args(ctx, append ? "openhuman.fs.appendFile" : "openhuman.fs.writeFile", argc, argv);
  PathArg path;
  bus::FsWriteFileRequest request;
  if (!to_path(args, 0, "path", append ? "appendFile" : "writeFile", path) ||
      !args.string_or_bytes(1, "data", request.data))
    return JS_EXCEPTION;
  request.path = std::move(path.value);
  request.append = append != 0;
  return send(ctx, {&path}, std::move(request), decode_undefined);
}

JSValue js_readdir(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "openhuman.fs.readdir", argc, argv);
  PathArg path;
  if (!to_path(args, 0, "path", "readdir", path)) return JS_EXCEPTION;
  return send(ctx, {&path}, bus::FsReaddirRequest{std::move(path.value)}, decode_readdir);
}

JSValue js_stat(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "openhuman.fs.stat", argc, argv);
  PathArg path;
  if (!to_path(args, 0, "path", "stat", path)) return JS_EXCEPTION;
  return send(ctx, {&path}, bus::FsStatRequest{std::move(path.value)}, decode_stat);
}

JSValue js_exists(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "openhuman.fs.exists", argc, argv);
  PathArg path;
  if (!to_path(args, 0, "path", "exists", path)) return JS_EXCEPTION;
  return send(ctx, {&path}, bus::FsExistsRequest{std::move(path.value)}, decode_boolean);
}

// mkdir (magic 0) and remove (magic 1): a path and {recursive}.
JSValue js_mkdir_or_remove(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv, int remove) {
  const Args args(ctx, remove ? "openhuman.fs.remove" : "openhuman.fs.mkdir", argc, argv);
  PathArg path;
  Options options;
  bool recursive = false;
  if (!to_path(args, 0, "path", remove ? "remove" : "mkdir", path) || !args.options(1, "options", options) ||
      !options.boolean("recursive", recursive))
    return JS_EXCEPTION;
  if (remove)
    return send(ctx, {&path}, bus::FsRemoveRequest{std::move(path.value), recursive}, decode_undefined);
  return send(ctx, {&path}, bus::FsMkdirRequest{std::move(path.value), recursive}, decode_undefined);
}

JSValue js_rename(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "openhuman.fs.rename", argc, argv);
  PathArg from;
  PathArg to;
  if (!to_path(args, 0, "from", "rename", from) || !to_path(args, 1, "to", "rename", to)) return JS_EXCEPTION;
  return send(ctx, {&from, &to}, bus::FsRenameRequest{std::move(from.value), std::move(to.value)},
              decode_undefined);
}

const JSCFunctionListEntry kFsFunctions[] = {
    list_function("readFile", 2, js_read_file),
    list_function_magic("writeFile", 2, js_write_file, 0),
    list_function_magic("appendFile", 2, js_write_file, 1),
    list_function("readdir", 1, js_readdir),
    list_function("stat", 1, js_stat),
    list_function("exists", 1, js_exists),
    list_function_magic("mkdir", 2, js_mkdir_or_remove, 0),
    list_function_magic("remove", 2, js_mkdir_or_remove, 1),
    list_function("rename", 2, js_rename),
};

}  // namespace

bool install_fs(JSContext* ctx, JSValueConst openhuman) {
  // Created on first access (list_object).
  static const JSCFunctionListEntry kFsObject[] = {
      list_object("fs", kFsFunctions, static_cast<int>(std::size(kFsFunctions))),
  };
  JS_SetPropertyFunctionList(ctx, openhuman, kFsObject, 1);
  return true;
}

}  // namespace skillbox::bindings
