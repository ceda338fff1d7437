# The Debian package (`make deb`: cpack -G DEB in the release tree): the binary, its
# systemd unit, /etc/boxoffice/boxoffice.env as a conffile, the docs Debian asks for
# (copyright, changelog, a manual page), dependencies from dpkg-shlibdeps. What is in
# deploy/debian/ and why: docs/operations.md, "Install as a service".
set(BOX_DEB_DIR ${CMAKE_SOURCE_DIR}/deploy/debian)
# cpack installs what is built without building everything first (the tests): the package
# needs only the targets boxoffice and box_deb_docs (scripts/package-test.sh builds them).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
set(BOX_DEB_GEN ${CMAKE_BINARY_DIR}/deb)
file(MAKE_DIRECTORY ${BOX_DEB_GEN})

install(TARGETS boxoffice RUNTIME DESTINATION bin)
# (Where Debian 12's own packages put units; /lib is /usr/lib on a merged-/usr system.)
install(FILES ${BOX_DEB_DIR}/boxoffice.service DESTINATION /lib/systemd/system)
install(FILES ${BOX_DEB_DIR}/boxoffice.env DESTINATION /etc/boxoffice)
install(FILES ${BOX_DEB_DIR}/copyright ${CMAKE_SOURCE_DIR}/README.md
              ${CMAKE_SOURCE_DIR}/docs/operations.md
        DESTINATION share/doc/boxoffice)

# Debian wants the changelog and the manual page gzipped with -9n (no name, no time stamp:
# the same bytes every build). The changelog's date is the commit's, so a package built
# twice from one commit is the same.
execute_process(COMMAND git -C ${CMAKE_SOURCE_DIR} log -1 --format=%cD
                OUTPUT_VARIABLE BOX_COMMIT_DATE OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE BOX_GIT_FAILED)
if(BOX_GIT_FAILED OR BOX_COMMIT_DATE STREQUAL "")
  set(BOX_COMMIT_DATE "Thu, 03 Dec 2026 00:00:00 +0000")
endif()
# (A native package, versioned without a Debian revision: its changelog is changelog.gz.)
configure_file(${BOX_DEB_DIR}/changelog.in ${BOX_DEB_GEN}/changelog @ONLY)
foreach(doc changelog boxoffice.1)
  if(doc STREQUAL boxoffice.1)
    set(src ${BOX_DEB_DIR}/boxoffice.1)
  else()
    set(src ${BOX_DEB_GEN}/${doc})
  endif()
  add_custom_command(OUTPUT ${BOX_DEB_GEN}/${doc}.gz
                     COMMAND gzip -9nc ${src} > ${BOX_DEB_GEN}/${doc}.gz
                     DEPENDS ${src} VERBATIM)
  list(APPEND BOX_DEB_GZ ${BOX_DEB_GEN}/${doc}.gz)
endforeach()
add_custom_target(box_deb_docs ALL DEPENDS ${BOX_DEB_GZ})
install(FILES ${BOX_DEB_GEN}/changelog.gz DESTINATION share/doc/boxoffice)
install(FILES ${BOX_DEB_GEN}/boxoffice.1.gz DESTINATION share/man/man1)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME boxoffice)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "cinema ticketing service that never sells a seat twice")
# (The summary above is the synopsis; CPack indents these lines and marks the empty one.)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "boxoffice sells cinema seats: customers hold up to 8 seats for 10 minutes,
all or nothing, and pay through an external gateway; every seat goes to
exactly one person, also when thousands ask for one hall at once.

The embedded profile keeps everything in one SQLite file under
/var/lib/boxoffice; the production profile uses PostgreSQL (also sharded),
Redis and Kafka. The service runs under systemd as boxoffice.service,
configured in /etc/boxoffice/boxoffice.env.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "boxoffice maintainers <maintainers@boxoffice.invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, tzdata")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "postgresql-15, redis-server")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${BOX_DEB_DIR}/conffiles ${BOX_DEB_DIR}/postinst ${BOX_DEB_DIR}/prerm ${BOX_DEB_DIR}/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
