# The build description of every program (common/base/version.h): version and build type fixed at
# configure time, the git commit refreshed on every build.
set(TESSERA_GIT_COMMIT "" CACHE STRING "Commit to report when the sources are not a git checkout")
set(TESSERA_GIT_COMMIT_CPP ${CMAKE_BINARY_DIR}/generated/git_commit.cpp)
add_custom_target(tessera_git_commit
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${TESSERA_GIT_COMMIT_CPP}
          -DCOMMIT=${TESSERA_GIT_COMMIT} -P ${CMAKE_SOURCE_DIR}/cmake/git_commit.cmake
  BYPRODUCTS ${TESSERA_GIT_COMMIT_CPP}
  COMMENT "Checking the git commit"
  VERBATIM)
# FindOpenCL reads the highest CL_VERSION_x_y the headers define.
set(TESSERA_OPENCL_HEADERS "${OpenCL_VERSION_STRING}")
if(NOT TESSERA_OPENCL_HEADERS)
  set(TESSERA_OPENCL_HEADERS "unknown")
endif()
set_source_files_properties(${CMAKE_SOURCE_DIR}/common/base/version.cpp PROPERTIES COMPILE_DEFINITIONS
  "TESSERA_VERSION=\"${PROJECT_VERSION}\";TESSERA_BUILD_TYPE=\"${CMAKE_BUILD_TYPE}\";TESSERA_OPENCL_HEADERS=\"${TESSERA_OPENCL_HEADERS}\"")
