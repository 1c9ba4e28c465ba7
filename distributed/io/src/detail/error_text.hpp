// The text of a caught exception, to put inside another exception's message: a tessera::Error
// gives its message without the " (rank r, device)" ending, which the new exception adds once.
#pragma once
#include <exception>
#include <string>

#include "tessera/local/error.hpp"

namespace tessera::detail {

inline std::string message_of(const std::exception& e) {
  if (const auto* t = dynamic_cast<const Error*>(&e)) return t->message();
  return e.what();
}

}  // namespace tessera::detail
