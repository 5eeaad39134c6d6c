#include "engine/code_check.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/commonjs.h"
#include "engine/handles.h"
#include "engine/heap.h"
#include "engine/limiter.h"
#include "engine/realm.h"
#include "engine/result.h"
#include "engine/skill_files.h"
#include "engine/source_map.h"

namespace skillbox::engine {
namespace {

/// What the module loader saw fail last: the importing module and the specifier.
struct LoaderState {
  const bus::SkillSources* sources = nullptr;
  std::string importer;
  std::string specifier;
  std::string message;
};

char* normalize(JSContext* ctx, const char* base, const char* name, void* opaque) {
  auto* state = static_cast<LoaderState*>(opaque);
  auto resolved = resolve_specifier(base, name);
  if (!resolved) {
    state->importer = base;
    state->specifier = name;
    state->message = resolved.error().message;
    JS_ThrowTypeError(ctx, "%s", resolved.error().message.c_str());
    return nullptr;
  }
  // The engine loads what it just normalized: remember who asked, for the line of a failed load.
  state->importer = base;
  state->specifier = name;
  auto* out = static_cast<char*>(js_malloc(ctx, resolved->size() + 1));
  if (out == nullptr) return nullptr;
  std::memcpy(out, resolved->c_str(), resolved->size() + 1);
  return out;
}

JSModuleDef* load(JSContext* ctx, const char* name, void* opaque) {
  auto* state = static_cast<LoaderState*>(opaque);
  auto found = find_module_source(*state->sources, name);
  if (!found) {
    // importer and specifier: from the normalize call that produced `name`.
    state->message = "cannot load module: " + found.error().message;
    JS_ThrowReferenceError(ctx, "%s", state->message.c_str());
    return nullptr;
  }
  const std::string& source = **found;
  Value compiled(ctx, JS_Eval(ctx, source.c_str(), source.size(), name,
                              JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY));
  if (compiled.is_exception()) return nullptr;
  return static_cast<JSModuleDef*>(JS_VALUE_GET_PTR(compiled.get()));
}

/// The first "name:line" in a stack whose name is one of the skill's files.
std::optional<std::pair<std::string, uint32_t>> location(const std::string& stack,
                                                         const bus::SkillSources& sources) {
  const std::vector<StackFrame> frames = stack_frames(stack, sources);
  if (frames.empty()) return std::nullopt;
  return std::make_pair(frames.front().file, frames.front().line);
}

class Checker {
 public:
  Checker(const bus::SkillSources& sources, const Limits& limits)
      : sources_(sources),
        limits_(limits),
        limiter_(limits_, Clock::now() + std::chrono::milliseconds(kCodeCheckTimeoutMs), flag_),
        heap_(limiter_) {
    state_.sources = &sources_;
  }
  ~Checker() {
    limiter_.detach();
    ctx_.reset();
    rt_.reset();
  }
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  CodeCheck run() {
    CodeCheck out;
    if (start()) {
      check_file(sources_.entry, /*is_entry=*/true);
      for (const auto& [name, text] : sources_.files) {
        if (name != sources_.entry) check_file(name, /*is_entry=*/false);
      }
    }
    // A file that fails to load fails again for every file that imports it, and again when it is
    // checked itself: each problem is said once, where it was first found.
    for (CodeProblem& p : problems_) {
      const bool seen = std::any_of(out.problems.begin(), out.problems.end(), [&](const CodeProblem& q) {
        return q.file == p.file && q.line == p.line && q.message == p.message;
      });
      if (!seen) out.problems.push_back(std::move(p));
    }
    out.entry_is_module = entry_is_module_;
    out.exports = std::move(exports_);
    if (!out.problems.empty()) out.exports.clear();
    return out;
  }

 private:
  bool start() {
    rt_.reset(JS_NewRuntime2(&HeapAccount::kFunctions, &heap_));
    if (rt_) ctx_.reset(new_skill_context(rt_.get(), heap_));
    if (!rt_ || !ctx_) {
      problems_.push_back(
          {sources_.entry, 0, "could not create a JS runtime to compile the skill (host out of memory)"});
      return false;
    }
    JS_SetMaxStackSize(rt_.get(), static_cast<size_t>(limits_.stack_bytes));
    JS_SetModuleLoaderFunc(rt_.get(), &normalize, &load, &state_);
    limiter_.attach(rt_.get(), ctx_.get());
    JS_SetMemoryLimit(rt_.get(), static_cast<size_t>(limits_.memory_bytes));
    heap_.enforce();
    return true;
  }

  void check_file(const std::string& name, bool is_entry) {
    JSContext* ctx = ctx_.get();
    auto found = find_module_source(sources_, name);
    if (!found) {
      problems_.push_back({name, 0, found.error().message});
      return;
    }
    const std::string& source = **found;
    state_.message.clear();
    const EntryKind kind = is_entry ? entry_kind(name, source) : EntryKind::module;
    bool is_module = kind == EntryKind::module && !std::string_view(name).ends_with(".cjs");
    if (kind == EntryKind::script_else_module) {
      // Session::load_entry's rule: a module if it says so, or if it compiles only as one.
      Value script(ctx, JS_Eval(ctx, source.c_str(), source.size(), name.c_str(),
                                JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_COMPILE_ONLY));
      if (!script.is_exception()) {  // a classic script: its exports are known when it runs
        check_commonjs(name, source);
        return;
      }
      Value ignored(ctx, JS_GetException(ctx));
      is_module = true;  // report the module's error if it is not one either
    }
    Value compiled(
        ctx, JS_Eval(ctx, source.c_str(), source.size(), name.c_str(),
                     (is_module ? JS_EVAL_TYPE_MODULE : JS_EVAL_TYPE_GLOBAL) | JS_EVAL_FLAG_COMPILE_ONLY));
    // The engine may load imports while compiling a module already, or in JS_ResolveModule below.
    if (compiled.is_exception()) {
      if (state_.message.empty()) {
        add_exception(name);
      } else {
        add_loader_failure(name);
      }
      return;
    }
    if (!is_module) {
      check_commonjs(name, source);
      return;
    }
    if (JS_ResolveModule(ctx, compiled.get()) < 0) {
      if (state_.message.empty()) {
        add_exception(name);  // an imported module that does not compile: its own error, with its line
      } else {
        add_loader_failure(name);
      }
      return;
    }
    auto* module = static_cast<JSModuleDef*>(JS_VALUE_GET_PTR(compiled.get()));
    if (is_entry) {
      entry_is_module_ = true;
      list_exports(module, name);
    }
    if (has_no_exports(module)) check_commonjs(name, source);
  }

  // True when the resolved `module` exports nothing (patch 0012: nothing linked or run). False when
  // the names cannot be read (out of memory): then the file is not judged.
  bool has_no_exports(JSModuleDef* module) {
    JSContext* ctx = ctx_.get();
    JSAtom* names = nullptr;
    int count = 0;
    if (JS_GetModuleExportNames(ctx, module, &names, &count) < 0) {
      JS_FreeValue(ctx, JS_GetException(ctx));
      return false;
    }
    for (int i = 0; i < count; ++i) JS_FreeAtom(ctx, names[i]);
    js_free(ctx, names);
    return count == 0;
  }

  // A file that compiled but has no ES export: if it uses require/module/exports at its top level, it
  // is CommonJS, which fails as soon as it runs (engine/commonjs.h). Said now, with what to write instead.
  void check_commonjs(const std::string& name, const std::string& source) {
    const std::optional<CommonJsUse> use = find_commonjs_use(source);
    if (!use) return;
    problems_.push_back(
        {name, use->line,
         "this is a CommonJS file (" + use->what +
             " at its top level), which skillbox cannot run: there is no require, module or exports. Write "
             "an "
             "ES module: `export default function (input) { ... }` (or `export function run`) instead of "
             "module.exports, and `import { f } from './f.js'` instead of require (docs/limits.md \"Entry "
             "and modules\")"});
  }

  // The entry's export names (patch 0012: read from the resolved module, nothing linked or run).
  void list_exports(JSModuleDef* module, const std::string& name) {
    JSContext* ctx = ctx_.get();
    JSAtom* names = nullptr;
    int count = 0;
    if (JS_GetModuleExportNames(ctx, module, &names, &count) < 0) {
      add_exception(name);
      return;
    }
    for (int i = 0; i < count; ++i) {
      const char* text = JS_AtomToCString(ctx, names[i]);
      if (text != nullptr) exports_.emplace_back(text);
      JS_FreeCString(ctx, text);
      JS_FreeAtom(ctx, names[i]);
    }
    js_free(ctx, names);
    std::sort(exports_.begin(), exports_.end());
  }

  // An import the loader refused: reported at the importing file's line that names the specifier.
  void add_loader_failure(const std::string& name) {
    Value ignored(ctx_.get(), JS_GetException(ctx_.get()));
    const std::string importer = state_.importer.empty() ? name : state_.importer;
    const auto it = sources_.files.find(importer);
    const uint32_t line = it == sources_.files.end() ? 0 : line_of_specifier(it->second, state_.specifier);
    problems_.push_back({importer, line, state_.message});
    state_.message.clear();
  }

  void add_exception(const std::string& name) {
    if (limiter_.check() || limiter_.tripped() != LimitKind::none) {
      Value ignored(ctx_.get(), JS_GetException(ctx_.get()));
      problems_.push_back(
          {name, 0,
           limiter_.tripped() == LimitKind::memory
               ? "compiling it needs more than the skill's heap limit (limits.memory_mb)"
           : limiter_.tripped() == LimitKind::stack
               ? "it is nested too deeply to compile within the skill's stack limit (limits.stack_kb)"
               : "compiling it took longer than the check allows"});
      return;
    }
    ErrorInfo e = take_exception(ctx_.get());
    CodeProblem p{name, 0, e.name.empty() ? e.message : e.name + ": " + e.message};
    if (auto where = location(e.stack, sources_)) {
      p.file = where->first;
      p.line = where->second;
    }
    problems_.push_back(std::move(p));
  }

  const bus::SkillSources& sources_;
  Limits limits_;
  DeadlineFlag flag_;
  Limiter limiter_;
  HeapAccount heap_;
  RuntimePtr rt_;
  ContextPtr ctx_;
  LoaderState state_;
  std::vector<CodeProblem> problems_;
  bool entry_is_module_ = false;
  std::vector<std::string> exports_;
};

}  // namespace

CodeCheck check_code(const bus::SkillSources& sources, const Limits& limits) {
  try {
    Checker checker(sources, limits);
    return checker.run();
  } catch (const std::exception& e) {
    CodeCheck out;
    out.problems.push_back(
        CodeProblem{sources.entry, 0, std::string("skillbox failed while compiling the skill: ") + e.what()});
    return out;
  }
}

}  // namespace skillbox::engine
