// Scaffolding: replaced by the real CLI (issue 2).
#include <cstdio>

#include "skillbox/version.h"

int main() {
  std::printf("skillbox %s (%s)\n", skillbox::kVersion, skillbox::kEngineVersion);
  return 0;
}
