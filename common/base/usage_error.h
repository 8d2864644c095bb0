#pragma once
// A bad command line: a value a program cannot take, or options that do not go together. Programs
// exit with status 2 for it, and with 1 for other errors (common/base/cli.h).
#include "common/base/error.h"

namespace tessera {

class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace tessera
