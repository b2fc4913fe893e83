# `cmake --install` (and the Debian package, which runs it): the binaries, the systemd unit
# with its sysusers and tmpfiles files, /etc/scalws (the unit's options and an example
# instance config), the example site, the man pages, bash completion for scalwsctl and the
# logrotate file of the instances' logs.
#
#   sbin:  scalwsd, scalws-controller, scalws-front (the controller looks for scalwsd and
#          scalws-front beside itself)
#   bin:   scalwsctl
set(deploy ${CMAKE_SOURCE_DIR}/deploy)
set(generated ${CMAKE_BINARY_DIR}/generated/install)

install(TARGETS scalwsd scalws-controller scalws-front RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
install(TARGETS scalwsctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# systemd's directories: where systemd.pc says for a /usr install (Debian 12: the unit in
# /lib/systemd/system), beneath the prefix otherwise.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  pkg_get_variable(systemd_unit_dir systemd systemdsystemunitdir)
  pkg_get_variable(systemd_sysusers_dir systemd sysusersdir)
  pkg_get_variable(systemd_tmpfiles_dir systemd tmpfilesdir)
endif()
if(NOT systemd_unit_dir)
  set(systemd_unit_dir ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
endif()
if(NOT systemd_sysusers_dir)
  set(systemd_sysusers_dir ${CMAKE_INSTALL_PREFIX}/lib/sysusers.d)
endif()
if(NOT systemd_tmpfiles_dir)
  set(systemd_tmpfiles_dir ${CMAKE_INSTALL_PREFIX}/lib/tmpfiles.d)
endif()
set(SCALWS_SYSTEMD_UNIT_DIR ${systemd_unit_dir} CACHE PATH "Where the systemd unit goes")
set(SCALWS_SYSUSERS_DIR ${systemd_sysusers_dir} CACHE PATH "Where the sysusers.d file goes")
set(SCALWS_TMPFILES_DIR ${systemd_tmpfiles_dir} CACHE PATH "Where the tmpfiles.d file goes")

# The unit names /usr/sbin and /etc/scalws; another prefix gets its own paths.
file(READ ${deploy}/systemd/scalws-controller.service unit)
string(REPLACE "/usr/sbin/" "${CMAKE_INSTALL_FULL_SBINDIR}/" unit "${unit}")
string(REPLACE "/etc/scalws/" "${CMAKE_INSTALL_FULL_SYSCONFDIR}/scalws/" unit "${unit}")
file(WRITE ${generated}/scalws-controller.service "${unit}")
install(FILES ${generated}/scalws-controller.service DESTINATION ${SCALWS_SYSTEMD_UNIT_DIR})
install(FILES ${deploy}/systemd/scalws.sysusers DESTINATION ${SCALWS_SYSUSERS_DIR}
        RENAME scalws.conf)
install(FILES ${deploy}/systemd/scalws.tmpfiles DESTINATION ${SCALWS_TMPFILES_DIR}
        RENAME scalws.conf)

# /etc/scalws: the unit's options, and the example site as an instance config whose root is
# the installed example (conffiles in the Debian package).
set(example_dir ${CMAKE_INSTALL_FULL_DATADIR}/scalws/example)
execute_process(
  COMMAND ${deploy}/examples/instance-config.sh ${deploy}/examples/site.toml ${example_dir}
  OUTPUT_FILE ${generated}/example.toml RESULT_VARIABLE example_rc)
if(NOT example_rc EQUAL 0)
  message(FATAL_ERROR "deploy/examples/instance-config.sh failed")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${deploy}/examples/site.toml ${deploy}/examples/instance-config.sh
             ${deploy}/systemd/scalws-controller.service)
install(FILES ${deploy}/systemd/controller.env
        DESTINATION ${CMAKE_INSTALL_SYSCONFDIR}/scalws)
install(FILES ${generated}/example.toml DESTINATION ${CMAKE_INSTALL_SYSCONFDIR}/scalws/sites)
install(FILES ${deploy}/examples/site.toml DESTINATION ${CMAKE_INSTALL_DATADIR}/scalws/example)
install(DIRECTORY ${deploy}/examples/www DESTINATION ${CMAKE_INSTALL_DATADIR}/scalws/example)

install(FILES ${deploy}/bash-completion/scalwsctl
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
# The instances' access and error logs (LOG_DIR/NAME/*.log): rotated daily, reopened with
# `scalwsctl instance reopen-logs --all`.
install(FILES ${deploy}/logrotate/scalws DESTINATION ${CMAKE_INSTALL_SYSCONFDIR}/logrotate.d)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/ARCHITECTURE.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Man pages, rendered from deploy/man/*.md and the README's reference sections
# (deploy/man/render.sh) whenever either changes. Without pandoc they are skipped, with a
# note; the Debian package build-depends on it.
find_program(PANDOC pandoc)
set(SCALWS_MAN_PAGES scalwsd.8 scalws-controller.8 scalws-front.8 scalwsctl.8 scalws.toml.5)
if(PANDOC)
  set(man_outputs "")
  foreach(page IN LISTS SCALWS_MAN_PAGES)
    set(out ${CMAKE_BINARY_DIR}/man/${page})
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
      COMMAND ${deploy}/man/render.sh ${CMAKE_SOURCE_DIR}/README.md ${deploy}/man/${page}.md
              ${out} ${PROJECT_VERSION}
      DEPENDS ${deploy}/man/${page}.md ${deploy}/man/render.sh ${CMAKE_SOURCE_DIR}/README.md
      COMMENT "man page ${page}" VERBATIM)
    list(APPEND man_outputs ${out})
    string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${page})
    install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
  endforeach()
  add_custom_target(man ALL DEPENDS ${man_outputs})
else()
  message(STATUS "pandoc not found: no man pages (deploy/install-deps.sh installs it)")
endif()
