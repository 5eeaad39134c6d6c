// cli/output.cpp — writing to stdout/stderr.
#include "cli/output.h"

namespace skillbox::cli {

void emit(std::FILE* stream, std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stream) != text.size()) return;  // error flag is set
  if (std::fflush(stream) != 0) return;                                         // likewise
}

}  // namespace skillbox::cli
