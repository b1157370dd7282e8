# testyard — one non-recursive Makefile, out-of-tree into $(BUILD).
#
# Layout of what gets built:
#   $(BUILD)/testyard                 the coordinator program
#   $(BUILD)/libtestyard.a / .so      the SDK plans link against
#   $(BUILD)/libtestyard-heap.so      the heap profiler as an LD_PRELOAD library
#                                     (RUNPATH $ORIGIN: its libraries next
#                                     to it first)
#   $(BUILD)/testyard.pc              pkg-config file for the SDK
#   $(BUILD)/tests/...                unit test programs
#
# Sources are found by wildcard, so adding a module is adding a file
# (docs/style.md draws the layout and the include rule):
#   runner/*.c           the command line (runner/main.c holds main)
#   runner/<module>/*.c  the runner's modules: base config docker builder
#                        sync backend run report
#   sdk/common/*.c       what the runner and the SDK share, compiled into both
#   sdk/*.c, sdk/heap/*.c  the SDK; sdk/heap/interpose*.c define malloc & co.
#                        and are only linked into plans (never into the
#                        runner, never into a sanitizer build, where the
#                        sanitizer owns malloc)
#   sdk/heap/preload*.c  only in libtestyard-heap.so
#   tests/unit/**/test_*.c  one program each, linked with the runner's objects
#   tests/sdk/test_*.c   one program each, linked with libtestyard.a (so with
#                        the malloc interposer in a normal build)
#   bench/*.c            one program each, linked like tests/sdk
#
# Include paths are per tree: the runner sees runner/ and sdk/common/ (so
# "docker/docker.h", "ty_wire.h"), the SDK sees sdk/, plans see only
# sdk/include/ (testyard.h).
#
# `make SAN=1` builds everything with ASan and UBSan into build/san.

VERSION := 0.1.0
PREFIX ?= /usr/local
DESTDIR ?=

SAN ?= 0
ifeq ($(SAN),1)
BUILD ?= build/san
else
BUILD ?= build
endif

CC ?= cc
PKG_CONFIG ?= pkg-config
PKGS := libzmq libcjson yaml-0.1 zlib libcurl sqlite3 libmicrohttpd
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wno-format-nonliteral
ifeq ($(WERROR),1)
WARN += -Werror
endif
OPT ?= -O2
CFLAGS ?= $(OPT) -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fPIC \
	-fno-omit-frame-pointer -fvisibility=hidden -MMD -MP \
	-DTY_VERSION='"$(VERSION)"' -DTY_PREFIX='"$(PREFIX)"' $(PKG_CFLAGS)
ALL_LDFLAGS := $(LDFLAGS) -pthread
LIBS := $(PKG_LIBS) -lm -ldl -pthread
# what the SDK itself needs: plans and LD_PRELOAD'ed programs load no more
SDK_PKGS := libcjson zlib
SDK_LIBS := $(shell $(PKG_CONFIG) --libs $(SDK_PKGS) 2>/dev/null) -lm -ldl \
	-pthread

ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
ALL_CFLAGS += $(SANFLAGS) -DTY_SANITIZE=1
ALL_LDFLAGS += $(SANFLAGS)
endif

RUNNER_INC := -Irunner -Isdk/common
SDK_INC := -Isdk/include -Isdk/common -Isdk -Isdk/heap
TEST_INC := $(RUNNER_INC) $(SDK_INC) -Itests/helpers

RUNNER_SRC := $(wildcard runner/*.c runner/*/*.c)
RUNNER_LIB_SRC := $(filter-out runner/main.c,$(RUNNER_SRC))
SDK_COMMON_SRC := $(wildcard sdk/common/*.c)
SDK_ALL_SRC := $(SDK_COMMON_SRC) $(wildcard sdk/*.c) \
	$(filter-out sdk/heap/preload%.c,$(wildcard sdk/heap/*.c))
SDK_CORE_SRC := $(filter-out sdk/heap/interpose%.c,$(SDK_ALL_SRC))
ifeq ($(SAN),1)
SDK_LIB_SRC := $(SDK_CORE_SRC)
else
SDK_LIB_SRC := $(SDK_ALL_SRC)
endif
PRELOAD_SRC := $(wildcard sdk/heap/preload*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c tests/unit/*/test_*.c)
SDKTEST_SRC := $(wildcard tests/sdk/test_*.c)
# programs of their own that tests start (not linked into the tests)
TOOL_SRC := tests/helpers/sockproxy.c tests/helpers/cdp.c \
	tests/helpers/pagesrv.c
# the browser driver's other files (linked into build/tests/cdp only)
CDP_SRC := tests/helpers/cdp_proto.c
TESTHELP_SRC := $(filter-out $(TOOL_SRC) $(CDP_SRC), \
	$(wildcard tests/helpers/*.c))
# helpers that use the runner's modules: linked into the unit tests only
UNITHELP_SRC := $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c \
	tests/unit/*/*.c))
# helpers of the SDK tests (the sync service they talk to comes from the
# runner's archive)
SDKHELP_SRC := $(filter-out $(SDKTEST_SRC),$(wildcard tests/sdk/*.c))
BENCH_SRC := $(wildcard bench/*.c)
BENCH_RUNNER := barrier pubsub tcpcopy mkrun freeport

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

RUNNER_LIB_OBJ := $(call obj,$(RUNNER_LIB_SRC))
SDK_COMMON_OBJ := $(call obj,$(SDK_COMMON_SRC))
SDK_CORE_OBJ := $(call obj,$(SDK_CORE_SRC))
SDK_LIB_OBJ := $(call obj,$(SDK_LIB_SRC))
PRELOAD_OBJ := $(call obj,$(PRELOAD_SRC))
TESTHELP_OBJ := $(call obj,$(TESTHELP_SRC))
UNITHELP_OBJ := $(call obj,$(UNITHELP_SRC))
SDKHELP_OBJ := $(call obj,$(SDKHELP_SRC))

PROGRAM := $(BUILD)/testyard
SDK_A := $(BUILD)/libtestyard.a
SDK_SO := $(BUILD)/libtestyard.so
HEAP_SO := $(BUILD)/libtestyard-heap.so
PC := $(BUILD)/testyard.pc
UNIT_BIN := $(addprefix $(BUILD)/tests/,$(basename $(notdir $(UNIT_SRC))))
SDKTEST_BIN := $(patsubst tests/sdk/%.c,$(BUILD)/tests/sdk_%,$(SDKTEST_SRC))
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
TOOL_BIN := $(patsubst tests/helpers/%.c,$(BUILD)/tests/%,$(TOOL_SRC))

.PHONY: all test test-unit test-valgrind test-browser demo bench lint format \
	install uninstall clean setup tests
.DEFAULT_GOAL := all

all: $(PROGRAM) $(SDK_A) $(SDK_SO) $(HEAP_SO) $(PC)

tests: all $(UNIT_BIN) $(SDKTEST_BIN) $(TOOL_BIN)

# Each tree compiles with its own include path (see the top).
$(BUILD)/runner/%.o: INC := $(RUNNER_INC)
$(BUILD)/sdk/%.o: INC := $(SDK_INC)
INC ?= $(TEST_INC)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC) -c $< -o $@

$(BUILD)/librunner.a: $(RUNNER_LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(PROGRAM): $(call obj,runner/main.c) $(BUILD)/librunner.a $(SDK_COMMON_OBJ)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(SDK_A): $(SDK_LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(SDK_SO): $(SDK_LIB_OBJ)
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,libtestyard.so -o $@ $^ \
		$(SDK_LIBS)

# RUNPATH $ORIGIN: the libraries it needs are looked for next to it
# first, which is how local:docker hands them to a program in an image
# that lacks them (one folder of read-only files, docs/docker.md); on the
# host they are found where they always are.
$(HEAP_SO): $(PRELOAD_OBJ) $(SDK_LIB_OBJ)
	$(CC) $(ALL_LDFLAGS) -shared -Wl,--enable-new-dtags \
		-Wl,-rpath,'$$ORIGIN' -o $@ $^ $(SDK_LIBS)

# Objects and files that embed PREFIX are rebuilt when it changes.
PREFIX_STAMP := $(BUILD)/.prefix$(subst /,_,$(PREFIX))
$(PREFIX_STAMP):
	@mkdir -p $(BUILD) && rm -f $(BUILD)/.prefix_* && touch $@
$(RUNNER_LIB_OBJ): $(PREFIX_STAMP)

$(PC): Makefile $(PREFIX_STAMP)
	@mkdir -p $(dir $@)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' \
	  'includedir=$${prefix}/include' '' 'Name: testyard' \
	  'Description: testyard SDK for test plans' 'Version: $(VERSION)' \
	  'Requires: libcjson zlib' \
	  'Cflags: -I$${includedir}' \
	  'Libs: -L$${libdir} -ltestyard -pthread -lm -ldl' > $@

# A unit test links the runner's modules and the SDK without its malloc
# interposer (some check what the runner reads against what the SDK
# writes); build/tests/test_<name> whichever module folder it is filed in.
define unit_test
$(BUILD)/tests/$(basename $(notdir $(1))): $(call obj,$(1)) $(TESTHELP_OBJ) \
		$(UNITHELP_OBJ) $(BUILD)/librunner.a $(SDK_CORE_OBJ)
	$$(CC) $$(ALL_LDFLAGS) -o $$@ $$^ $$(LIBS)
endef
$(foreach t,$(UNIT_SRC),$(eval $(call unit_test,$(t))))

$(TOOL_BIN): $(BUILD)/tests/%: $(BUILD)/tests/helpers/%.o
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(TOOL_LIBS) -pthread
# cdp (the browser driver) speaks JSON to Chromium; it and the page server
# its test starts use sdk/common's buffer and write loops
$(BUILD)/tests/cdp: $(call obj,$(CDP_SRC)) $(BUILD)/sdk/common/ty_buf.o \
	$(BUILD)/sdk/common/ty_io.o
$(BUILD)/tests/pagesrv: $(BUILD)/sdk/common/ty_io.o
$(BUILD)/tests/cdp: TOOL_LIBS := $(shell $(PKG_CONFIG) --libs libcjson \
	2>/dev/null)

$(BUILD)/tests/sdk_test_%: $(BUILD)/tests/sdk/test_%.o $(TESTHELP_OBJ) \
		$(SDKHELP_OBJ) $(BUILD)/librunner.a $(SDK_A)
	$(CC) $(ALL_LDFLAGS) -rdynamic -o $@ $< $(TESTHELP_OBJ) $(SDKHELP_OBJ) \
		$(BUILD)/librunner.a $(SDK_A) $(LIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(SDK_A)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(SDK_A) $(LIBS)

# The benchmarks that drive the runner's own modules (the sync service in a
# child process, the wire encoding) link like tests/unit, with the shared
# helpers in bench/lib; the others link like plans, with libtestyard.a.
BENCH_LIB_OBJ := $(call obj,$(wildcard bench/lib/*.c))
BENCH_RUNNER_BIN := $(filter $(addprefix $(BUILD)/bench/,$(BENCH_RUNNER)), \
	$(BENCH_BIN))
$(BENCH_RUNNER_BIN): $(BUILD)/bench/%: $(BUILD)/bench/%.o $(BENCH_LIB_OBJ) \
		$(BUILD)/librunner.a $(SDK_CORE_OBJ)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

setup:
	@scripts/setup build

# The README's test command. Installs what is missing, builds the normal and
# the sanitizer trees, and runs every suite; the last line is the tally.
test:
	@scripts/setup test
	@$(MAKE) --no-print-directory tests
	@$(MAKE) --no-print-directory SAN=1 tests
	@scripts/docker-up || true
	@tests/run

test-unit: tests
	@tests/run --only unit

test-valgrind: tests
	@tests/run --valgrind --only unit --only sdk

test-browser: tests
	@scripts/setup browser
	@tests/browser/run

demo:
	@scripts/setup demo
	@$(MAKE) --no-print-directory all
	@scripts/demo

bench:
	@scripts/setup bench
	@$(MAKE) --no-print-directory all $(BENCH_BIN)
	@bench/run $(BUILD)

lint:
	@scripts/setup lint
	@scripts/lint

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
	  $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/share/testyard
	install -m 755 $(PROGRAM) $(DESTDIR)$(PREFIX)/bin/testyard
	install -m 644 $(SDK_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SDK_SO) $(HEAP_SO) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 sdk/include/testyard.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(PC) $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	cp -R plans compositions docker $(DESTDIR)$(PREFIX)/share/testyard/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/testyard \
	  $(DESTDIR)$(PREFIX)/lib/libtestyard.a \
	  $(DESTDIR)$(PREFIX)/lib/libtestyard.so \
	  $(DESTDIR)$(PREFIX)/lib/libtestyard-heap.so \
	  $(DESTDIR)$(PREFIX)/include/testyard.h \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig/testyard.pc
	rm -rf $(DESTDIR)$(PREFIX)/share/testyard

clean:
	rm -rf build $(BUILD)

# ---- fuzz targets ----------------------------------------------------------
# tests/fuzz/fuzz_*.c, one libFuzzer program each (docs/testing.md): the
# runner's and the SDK's sources are built again with clang into build/fuzz
# with -fsanitize=fuzzer-no-link,address,undefined, and each harness links
# them with the fuzzer's main. `make fuzz` builds them and runs each for
# FUZZ_S seconds on its seed corpus (tests/fuzz/corpus/<target>/); a
# finding fails it. `make fuzz-build` only builds.
FUZZ_CC ?= clang
FUZZ_S ?= 10
FUZZ_DIR := build/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
# Warnings as for gcc but never -Werror (the gcc builds guard those; clang
# has a few more), and none for designated initializers that leave fields
# out, which the tables here do on purpose.
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE $(filter-out -Werror,$(WARN)) \
	-Wno-missing-field-initializers \
	-O1 -g -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link $(FUZZ_SAN) -DTY_SANITIZE=1 -MMD -MP \
	$(TEST_INC) -Itests/fuzz -DTY_VERSION='"$(VERSION)"' \
	-DTY_PREFIX='"$(PREFIX)"' $(PKG_CFLAGS)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_LIB_OBJ := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(RUNNER_LIB_SRC) \
	$(SDK_CORE_SRC) $(filter-out $(FUZZ_SRC),$(wildcard tests/fuzz/*.c)))
FUZZ_MAIN_OBJ := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(FUZZ_SRC))
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(FUZZ_SRC))

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BIN)

fuzz:
	@scripts/setup fuzz
	@$(MAKE) --no-print-directory fuzz-build
	@FUZZ_S=$(FUZZ_S) tests/fuzz/run

$(FUZZ_LIB_OBJ) $(FUZZ_MAIN_OBJ): $(FUZZ_DIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_DIR)/libfuzzed.a: $(FUZZ_LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_BIN): $(FUZZ_DIR)/%: $(FUZZ_DIR)/tests/fuzz/%.o $(FUZZ_DIR)/libfuzzed.a
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LIBS)

-include $(shell find $(FUZZ_DIR) -name '*.d' 2>/dev/null)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
