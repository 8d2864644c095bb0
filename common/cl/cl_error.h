#pragma once
// Every failed OpenCL call becomes a ClError whose message is one line naming the call, its
// arguments that matter, and the error name and code, e.g.
//   clCreateBuffer(kd_nodes, 412 MB) failed: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)
#include <CL/cl.h>

#include <string>

#include "common/base/error.h"

namespace tessera::cl {

class ClError : public Error {
 public:
  ClError(const std::string& message, cl_int code) : Error(message), code_(code) {}
  cl_int code() const { return code_; }

 private:
  cl_int code_;
};

// "CL_OUT_OF_RESOURCES" for -5; "unknown OpenCL error" for codes no header names.
const char* cl_error_name(cl_int code);

// Throws ClError("<call> failed: <NAME> (<code>)").
[[noreturn]] void throw_cl_error(cl_int code, const std::string& call);

inline void check_cl(cl_int code, const char* call) {
  if (code != CL_SUCCESS) throw_cl_error(code, call);
}

}  // namespace tessera::cl

// Like check_cl, but the call description (often built with string concatenation) is only
// evaluated when the call failed, so hot paths such as kernel launches pay nothing for it.
#define TESSERA_CL_CHECK(expr, call_description)                                         \
  do {                                                                                   \
    const cl_int tessera_cl_status_ = (expr);                                            \
    if (tessera_cl_status_ != CL_SUCCESS)                                                \
      ::tessera::cl::throw_cl_error(tessera_cl_status_, (call_description));             \
  } while (0)
