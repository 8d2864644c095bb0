# Installing Tessera and packaging it for Debian (`./tessera package`, or `cpack` in the build folder).
#
# Every executable target named tessera-* is a program: it is installed into bin/, gets a man page
# (help2man, from its --help and --version) and a bash completion (from its CLI11 definition), and is
# listed in programs.txt for tests/test_cli_conventions.cpp. New programs need no entry here.
#
# Three packages, by the machine they go on:
#   tessera-worker  render hosts: tessera-worker, the systemd unit tessera-worker@.service
#   tessera-master  the machine driving a cluster: tessera-master, tessera-compare, the web client
#   tessera-tools   scene preparation and measurement: tessera-pack, tessera-render, tessera-bench,
#                   tessera-netem-relay (and any other program)
include(GNUInstallDirs)
# `install` and cpack take what ./tessera build made, without building (nor relinking for a new
# commit) themselves.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

function(tessera_collect_programs dir out)
  set(found)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE" AND target MATCHES "^tessera-")
      list(APPEND found ${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir ${subdirs})
    tessera_collect_programs(${subdir} sub_found)
    list(APPEND found ${sub_found})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
tessera_collect_programs(${CMAKE_SOURCE_DIR} TESSERA_PROGRAMS)
list(SORT TESSERA_PROGRAMS)

function(tessera_program_component program out)
  if(program STREQUAL "tessera-worker")
    set(${out} worker PARENT_SCOPE)
  elseif(program MATCHES "^tessera-(master|compare|live-client)$")
    set(${out} master PARENT_SCOPE)
  else()
    set(${out} tools PARENT_SCOPE)
  endif()
endfunction()

# ---- programs, their man pages and bash completions ----
find_program(HELP2MAN help2man)
if(NOT HELP2MAN)
  message(STATUS "help2man not found: no man pages (./tessera build installs it)")
endif()
set(program_list "")
set(doc_outputs)
foreach(program ${TESSERA_PROGRAMS})
  tessera_program_component(${program} component)
  install(TARGETS ${program} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${component})
  string(APPEND program_list "$<TARGET_FILE:${program}>\n")
  if(CMAKE_CROSSCOMPILING)
    continue()  # the programs cannot run on the build machine to describe themselves
  endif()
  set(completion ${CMAKE_BINARY_DIR}/completions/${program})
  add_custom_command(
    OUTPUT ${completion}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${program}> -DARGS=--print-bash-completion -DOUTPUT=${completion}
            -P ${CMAKE_SOURCE_DIR}/cmake/run_to_file.cmake
    DEPENDS ${program} ${CMAKE_SOURCE_DIR}/cmake/run_to_file.cmake
    COMMENT "Generating the bash completion of ${program}"
    VERBATIM)
  list(APPEND doc_outputs ${completion})
  install(FILES ${completion} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT ${component})
  if(HELP2MAN)
    set(man ${CMAKE_BINARY_DIR}/man/${program}.1.gz)
    add_custom_command(
      OUTPUT ${man}
      COMMAND ${CMAKE_COMMAND} -DHELP2MAN=${HELP2MAN} -DPROGRAM=$<TARGET_FILE:${program}> -DNAME=${program} -DOUTPUT=${man}
              -P ${CMAKE_SOURCE_DIR}/cmake/man_page.cmake
      DEPENDS ${program} ${CMAKE_SOURCE_DIR}/cmake/man_page.cmake
      COMMENT "Generating the man page of ${program}"
      VERBATIM)
    list(APPEND doc_outputs ${man})
    install(FILES ${man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${component})
  endif()
endforeach()
add_custom_target(tessera_program_docs ALL DEPENDS ${doc_outputs})
if(TARGET tessera_tests)
  add_dependencies(tessera_tests tessera_program_docs)  # tests/test_cli_conventions.cpp reads them
endif()
# Every program's path, one a line: tests/test_cli_conventions.cpp runs each of them.
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/programs.txt CONTENT "${program_list}")

# ---- systemd unit (its ExecStart names the installed binary) and the worker's settings example ----
install(CODE "set(TESSERA_UNIT_SOURCE \"${CMAKE_SOURCE_DIR}/deploy/systemd/tessera-worker@.service\")" COMPONENT worker)
install(SCRIPT ${CMAKE_SOURCE_DIR}/cmake/install_systemd_unit.cmake COMPONENT worker)
install(FILES deploy/systemd/worker.env.example DESTINATION ${CMAKE_INSTALL_DATADIR}/tessera COMPONENT worker)
install(FILES deploy/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/deploy COMPONENT worker)

# ---- the master's web client, where this checkout has one ----
if(EXISTS ${CMAKE_SOURCE_DIR}/master/web)
  install(DIRECTORY master/web/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tessera/web COMPONENT master)
endif()

# ---- Debian packages ----
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tessera)
set(CPACK_PACKAGE_VENDOR "Tessera")
set(CPACK_PACKAGE_CONTACT "Tessera maintainers <tessera@localhost>")
# Installed under /usr through DESTDIR, so that install scripts see the final prefix (the systemd
# unit's ExecStart) rather than CPack's staging folder.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL worker master tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tessera-worker_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION graphics)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
# Runtime libraries from dpkg-shlibdeps (dpkg-dev): exactly what the binaries link.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libOpenCL.so.1 (the ICD loader) is linked; an ICD gives it devices (--device host needs none).
set(CPACK_DEBIAN_WORKER_PACKAGE_RECOMMENDS "opencl-icd | pocl-opencl-icd")
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "opencl-icd | pocl-opencl-icd")
# First line: the package's summary; the rest its long description (CPack wraps and indents it).
set(CPACK_COMPONENT_WORKER_DESCRIPTION "Tessera render worker (distributed OpenCL ray tracing)
tessera-worker is the render daemon of a Tessera cluster: it holds packed scenes by content hash and ray traces the image tiles a master asks for, on an OpenCL device or the host CPU. The package brings the systemd unit tessera-worker@.service (one instance per worker, settings in /etc/tessera/worker-NAME.env).")
set(CPACK_COMPONENT_MASTER_DESCRIPTION "Tessera cluster master (distributed OpenCL ray tracing)
tessera-master drives a cluster of tessera-worker daemons: head poses in, tiles out, composited frames back. tessera-compare measures images against each other (MSE, PSNR, SSIM).")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "Tessera scene packer, renderer and benchmarks
tessera-pack packs triangle scenes into .tpk files (quantized mesh, compact kd-tree); tessera-render renders one frame without a cluster; tessera-bench times the kernels; tessera-netem-relay emulates a slow link between master and workers.")
include(CPack)
