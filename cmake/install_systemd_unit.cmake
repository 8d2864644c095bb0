# Install step of the worker component: the systemd unit with ExecStart and Documentation pointing
# into the install prefix (the unit in deploy/systemd names /usr/local, for installs by hand).
# TESSERA_UNIT_SOURCE is set by the install(CODE) before this script.
file(READ "${TESSERA_UNIT_SOURCE}" unit)
string(REGEX REPLACE "\n(ExecStart=|Documentation=file://)/usr/local/" "\n\\1${CMAKE_INSTALL_PREFIX}/" unit "${unit}")
set(dir "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
file(MAKE_DIRECTORY "${dir}")
file(WRITE "${dir}/tessera-worker@.service" "${unit}")
message(STATUS "Installing: ${dir}/tessera-worker@.service")
