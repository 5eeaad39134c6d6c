# The `worker.links_no_host_code` test: cmake -DWORKER=<path of skillbox-worker> -P CheckWorkerLinks.cmake
#
# The worker executable is what a skill that escaped the engine would be running inside of, so what it
# links is part of the second wall (docs/isolation.md): it must hold no code that reaches the network
# or the host's secrets, even as dead code a return-oriented exploit could call. Checked on the built
# binary, not the CMake declarations, so an indirect dependency cannot slip through:
#  - `readelf -d`: no libcurl (nor the TLS libraries it would bring) among the NEEDED libraries;
#  - `nm -C`: no curl_ symbol, no symbol of skillbox::capabilities (the fs, http, store, env and log
#    capabilities and the db file's lease), none of the runner (the host composition, the credential
#    vault), and none that names the vault, the store or the workspace. The bundle database's engine
#    (skillbox::bundle_db) is there on purpose: it runs statements on an in-memory image in the worker.
# Fails listing every offending line.

if(NOT DEFINED WORKER)
  message(FATAL_ERROR "usage: cmake -DWORKER=<skillbox-worker> -P CheckWorkerLinks.cmake")
endif()

execute_process(COMMAND readelf -d "${WORKER}" OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${WORKER} failed (${rc})")
endif()
execute_process(COMMAND nm -C "${WORKER}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -C ${WORKER} failed (${rc})")
endif()

set(problems "")
string(REPLACE "\n" ";" dynamic_lines "${dynamic}")
set(needed_count 0)
foreach(line IN LISTS dynamic_lines)
  if(line MATCHES "\\(NEEDED\\)")
    math(EXPR needed_count "${needed_count} + 1")
    if(line MATCHES "libcurl|libssl|libcrypto|libnghttp|libgnutls")
      list(APPEND problems "NEEDED: ${line}")
    endif()
  endif()
endforeach()
if(needed_count EQUAL 0)
  list(APPEND problems "readelf found no NEEDED entry at all: not the dynamic executable expected")
endif()

# Symbols: one per line; `;` inside C++ names would split a CMake list, so escape them first.
string(REPLACE ";" "," symbols "${symbols}")
string(REPLACE "\n" ";" symbol_lines "${symbols}")
set(forbidden "curl_|Curl_|skillbox::capabilities::|skillbox::runner::|skillbox::(CredentialVault|StoreDatabase|SkillStore|WorkspaceFiles)[^a-zA-Z_]")
set(symbol_count 0)
foreach(line IN LISTS symbol_lines)
  math(EXPR symbol_count "${symbol_count} + 1")
  if(line MATCHES "${forbidden}")
    list(APPEND problems "symbol: ${line}")
  endif()
endforeach()
if(symbol_count LESS 100)
  list(APPEND problems "nm listed only ${symbol_count} symbols: the binary is stripped, the check proves nothing")
endif()

if(problems)
  list(LENGTH problems count)
  list(SUBLIST problems 0 40 shown)
  list(JOIN shown "\n  " text)
  message(FATAL_ERROR "${WORKER} links host code the worker must not carry (${count} findings, first 40):\n  ${text}")
endif()
message(STATUS "worker links: ${needed_count} NEEDED libraries and ${symbol_count} symbols, none of them host code")
