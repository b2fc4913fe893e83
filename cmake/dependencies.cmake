# Every dependency comes from a Debian package (deploy/install-deps.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL 3 REQUIRED)
pkg_check_modules(LIBUV REQUIRED IMPORTED_TARGET libuv)
pkg_check_modules(NGHTTP2 REQUIRED IMPORTED_TARGET libnghttp2)
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
pkg_check_modules(SYSTEMD REQUIRED IMPORTED_TARGET libsystemd)
# Compression on the fly: gzip, brotli and zstd.
pkg_check_modules(COMPRESSION REQUIRED IMPORTED_TARGET zlib libbrotlienc libzstd)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
find_package(nlohmann_json 3 REQUIRED)

# toml++ is used header-only so it can be built without exceptions (errors are
# values); Debian's shared library is built with exceptions and a different ABI.
add_library(scalws_tomlplusplus INTERFACE)
target_compile_definitions(scalws_tomlplusplus INTERFACE TOML_HEADER_ONLY=1 TOML_EXCEPTIONS=0)

# HTTP/3: ngtcp2 (QUIC) with its GnuTLS crypto backend, and nghttp3. Debian's OpenSSL 3.0
# has no QUIC API, so the QUIC handshake runs on GnuTLS over the same certificate files.
# SCALWS_HTTP3 defaults to ON when all of them are found; a build without them refuses
# `http3 = true` in a config.
pkg_check_modules(QUIC IMPORTED_TARGET libngtcp2 libngtcp2_crypto_gnutls gnutls)
pkg_check_modules(NGHTTP3 IMPORTED_TARGET libnghttp3)
if(QUIC_FOUND AND NGHTTP3_FOUND)
  set(scalws_http3_default ON)
else()
  set(scalws_http3_default OFF)
endif()
option(SCALWS_HTTP3 "Serve HTTP/3 over QUIC (ngtcp2 + GnuTLS + nghttp3)" ${scalws_http3_default})
if(SCALWS_HTTP3)
  if(NOT (QUIC_FOUND AND NGHTTP3_FOUND))
    message(FATAL_ERROR "SCALWS_HTTP3 needs libngtcp2-dev, libngtcp2-crypto-gnutls-dev, "
                        "libgnutls28-dev and libnghttp3-dev (deploy/install-deps.sh)")
  endif()
  add_compile_definitions(SCALWS_HTTP3=1)
else()
  add_compile_definitions(SCALWS_HTTP3=0)
endif()
message(STATUS "HTTP/3: ${SCALWS_HTTP3}")
