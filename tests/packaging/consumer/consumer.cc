// The README's embedding example as a program: runs the skill in argv[1] with input argv[2], in-process,
// or with argv[3] "process" in a worker process (SKILLBOX_WORKER: $<TARGET_FILE:skillbox::worker>).
#include <iostream>
#include <memory>
#include <string>

#include "skillbox/skillbox.h"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: consumer SKILL_DIR INPUT_JSON [inprocess|process]\n";
    return 2;
  }
  auto skill = skillbox::Skill::load(argv[1]);
  if (!skill) {
    std::cerr << skill.error().message << "\n";
    return 2;
  }
  const std::string isolation = argc == 4 ? argv[3] : "inprocess";
  std::unique_ptr<skillbox::Runner> runner;
  if (isolation == "process") {
    skillbox::HostOptions options;
#ifdef SKILLBOX_WORKER
    options.worker_path = SKILLBOX_WORKER;
#endif
    runner = std::make_unique<skillbox::WorkerRunner>(options);
  } else {
    runner = std::make_unique<skillbox::InProcessRunner>();
  }
  skillbox::RunResult r = runner->run({.skill = *skill, .input_json = argv[2]});
  std::cout << skillbox::to_string(r.outcome) << " " << r.value_json << "\n";
  if (r.error) std::cerr << r.error->name << ": " << r.error->message << "\n";
  return skillbox::exit_code(r.outcome);
}
