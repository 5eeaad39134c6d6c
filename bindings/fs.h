// bindings/fs.h — `openhuman.fs`: the skill's workspace, as Promise-returning functions.
//
//   readFile(path, {encoding: 'utf8' | 'binary'})  -> string (invalid UTF-8 as U+FFFD) | Uint8Array
//   writeFile(path, data), appendFile(path, data)  -> undefined   (data: string as UTF-8, or Uint8Array)
//   readdir(path)                                  -> [{name, type: 'file' | 'directory' | 'other'}]
//   stat(path)                                     -> {type, size, mtimeMs}
//   exists(path)                                   -> boolean
//   mkdir(path, {recursive}), remove(path, {recursive}), rename(from, to) -> undefined
//
// Argument types are checked here, synchronously (TypeError, thrown): paths must be string primitives
// (a Uint8Array, an array, a String object or anything with a toString is refused without being
// converted); `data` a string or a Uint8Array; options undefined, null or an object whose `encoding` /
// `recursive` are read once. Everything about the path itself (syntax, where it leads, the mode,
// quotas) is the capability's (capabilities/fs/workspace.h): its refusals reject the promise with a
// host error (PermissionDenied, NotFound, ...). A path longer than the wire limit bus::kMaxPathBytes
// is refused here, as a rejection with the capability's own message (bus::path_too_long), so the host
// never copies it. See docs/fs.md.
#pragma once

#include <quickjs.h>

namespace skillbox::bindings {

/// Defines `fs` on the `openhuman` namespace object. Returns false with an exception pending.
[[nodiscard]] bool install_fs(JSContext* ctx, JSValueConst openhuman);

}  // namespace skillbox::bindings
