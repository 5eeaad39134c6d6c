// engine/module_requests.h — what a source file imports, read by the engine's own parser, nothing run.
//
// A skill's sources are its entry and the files it imports, transitively, and nothing else
// (runner/skill_reader.h, engine/module_graph.h). What a file imports is known only from its code, so
// the walk asks QuickJS's parser, where the engine runs (the host in-process, the sandboxed worker in
// worker mode; never worker mode's supervisor): JS_ParseModuleRequests (engine patch 0021) reports
// every specifier of an `import ... from`, `import '...'` and `export ... from` declaration, and of
// each `import()` whose argument is a single string literal. Comments, strings, template literals and regular
// expressions are the parser's business, so `// import x from './y.js'` or a string that looks like an import
// is never taken for one. The parse builds no function: nothing is compiled to bytecode, linked or evaluated,
// and the runtime has a bare context (no intrinsics beyond the basic objects, no host API).
//
// An `import()` whose argument is computed (`import('./' + name)`) cannot be known before it runs; it
// can load only files that are among the sources for another reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/handles.h"
#include "engine/heap.h"
#include "engine/limiter.h"
#include "skillbox/policy.h"

namespace skillbox::engine {

/// The module specifiers one source file requests.
struct ModuleRequests {
  /// As written in the source ("./lib.js", "lodash"), each once, in source order. Not resolved: the
  /// caller resolves them against the file's name (resolve_specifier).
  std::vector<std::string> specifiers;
  /// False when the parse stopped before the end of the file: a syntax error, the heap or stack limit.
  /// The specifiers read up to there are kept; compiling the file fails for the same reason, and the
  /// run or `skillbox check` reports it then.
  bool complete = true;
};

/// A throwaway runtime that parses source files for their module requests. The heap limit is the
/// skill's (limits.memory_bytes, at least Limits::kMinMemoryBytes) and so is the JS stack limit
/// (limits.stack_bytes): a file the skill could not compile is not parsed past that point either. Each
/// parse frees what it built, so the heap holds one file's parse at a time.
///
/// Use it on the thread that made it only (QuickJS measures the stack limit from where the runtime
/// was created), a thread whose stack exceeds limits.stack_bytes plus kNativeStackReserve
/// (engine/session.h): runner::JsThreadPool's threads.
class ModuleRequestParser {
 public:
  explicit ModuleRequestParser(const Limits& limits);
  ~ModuleRequestParser();
  ModuleRequestParser(const ModuleRequestParser&) = delete;
  ModuleRequestParser& operator=(const ModuleRequestParser&) = delete;

  /// The requests of the entry named `name`, parsed as a module or as a classic script by the rule
  /// the Session compiles it with (entry_kind, engine/skill_files.h).
  [[nodiscard]] ModuleRequests entry(const std::string& name, const std::string& source);
  /// The requests of the imported file `name`, parsed as a module (the loader compiles every imported
  /// file as one).
  [[nodiscard]] ModuleRequests module(const std::string& name, const std::string& source);

  /// How many files this process has parsed so far, by any parser. An observable for tests: in
  /// worker mode the supervisor must parse none (docs/isolation.md "What the supervisor does").
  [[nodiscard]] static uint64_t parses_in_this_process();

 private:
  /// Parses `source` as a module or a classic script; false if the parse stopped early.
  bool parse(const std::string& name, const std::string& source, bool is_module, ModuleRequests& out);

  Limits limits_;
  DeadlineFlag flag_;  // never raised: a parse is bounded by its input, not by a clock
  Limiter limiter_;
  HeapAccount heap_;
  RuntimePtr rt_;
  ContextPtr ctx_;
};

}  // namespace skillbox::engine
