// The README's embedding example as a program: runs the skill in argv[1] with input argv[2].
#include <iostream>

#include "skillbox/skillbox.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: consumer SKILL_DIR INPUT_JSON\n";
    return 2;
  }
  auto skill = skillbox::Skill::load(argv[1]);
  if (!skill) {
    std::cerr << skill.error().message << "\n";
    return 2;
  }
  skillbox::InProcessRunner runner;
  skillbox::RunResult r = runner.run({.skill = *skill, .input_json = argv[2]});
  std::cout << skillbox::to_string(r.outcome) << " " << r.value_json << "\n";
  if (r.error) std::cerr << r.error->name << ": " << r.error->message << "\n";
  return skillbox::exit_code(r.outcome);
}
