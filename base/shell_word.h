// base/shell_word.h — a word quoted for a POSIX shell, for commands a message asks the operator to paste.
#pragma once

#include <string>

namespace skillbox::base {

/// `word` as it is when it is made only of characters no shell treats specially (letters, digits and
/// `/._-+,:@%`), else in single quotes with each `'` written `'\''`. The empty word is `''`.
[[nodiscard]] std::string shell_word(const std::string& word);

}  // namespace skillbox::base
