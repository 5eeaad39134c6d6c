// runner/code_check.cpp — skillbox::check_code: the skill's sources read as for a run, then compiled
// and resolved by engine::check_code on a thread with the JS stack a run gets.
#include "engine/code_check.h"

#include "runner/js_thread_pool.h"
#include "runner/skill_reader.h"
#include "skillbox/skillbox.h"

namespace skillbox {

CodeCheck check_code(const Skill& skill) {
  const Manifest& m = skill.manifest();
  CodeCheck out;
  // One thread with a JS stack both parses the imports (read_skill_sources) and compiles the graph.
  const bool ran = runner::JsThreadPool::run_on_fresh_thread([&] {
    auto sources = runner::read_skill_sources(skill.dir(), m.entry, m.limits);
    if (!sources) {
      out.problems.push_back(CodeProblem{m.entry, 0, sources.error().message});
      return;
    }
    out = engine::check_code(*sources, m.limits);
  });
  if (!ran) {
    out = CodeCheck{};
    out.problems.push_back(CodeProblem{m.entry, 0, "could not start a thread to compile the skill"});
  }
  return out;
}

}  // namespace skillbox
