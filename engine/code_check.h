// engine/code_check.h — `skillbox check`'s look at a skill's JavaScript: compile, resolve, never run.
//
// Every file of the skill's sources (the entry's module graph, runner/skill_reader.h) is compiled in a
// throwaway runtime built like an invocation's (the one allocator, the skill's heap limit, its JS stack
// limit, a short deadline), the way the Session compiles it: the entry as a module or a classic script
// by the same rule as Session::load_entry (entry_kind), every other file as a module (only modules can
// be imported; a .cjs file as a script). For each module, JS_ResolveModule then loads the modules it imports
// through the same specifier rules as a run (resolve_specifier, find_module_source), recursively, without
// linking or evaluating anything: no line of the skill's code runs. The entry module's export names come from
// the resolved module (JS_GetModuleExportNames, engine patch 0012), also without linking. Named imports
// (`import { x }`) are not matched against the exports here; that happens when a run links the modules.
#pragma once

#include <string>
#include <vector>

#include "bus/skill_sources.h"
#include "skillbox/skillbox.h"

namespace skillbox::engine {

/// Most time one check may take: compiling is fast, and a pathological file must not hang `check`.
inline constexpr uint64_t kCodeCheckTimeoutMs = 5000;

/// The problems of `sources` (empty when every file compiles and every import resolves), in file
/// order, the entry first, and the entry's export names when it is a module without problems. `limits` gives
/// the heap and stack limits. Runs on the calling thread, whose stack must exceed limits.stack_bytes plus
/// kNativeStackReserve (engine/session.h). Never throws.
CodeCheck check_code(const bus::SkillSources& sources, const Limits& limits);

}  // namespace skillbox::engine
