# traceboard — a plain, explicit Makefile.
#   make            build build/traceboard
#   make run        install missing Debian packages, build, start with demo data
#   make test       install test dependencies, build, run every test suite
#   make asan       the C tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench      ingest and query benchmarks (figures, not pass/fail)
#   make fuzz       build the libFuzzer targets (clang)
#   make clean

CC      ?= cc
PKGS    := libmicrohttpd jansson sqlite3 zlib
# ISA-L's igzip inflates gzip traces several times faster than zlib; used when
# installed (Debian libisal-dev), zlib otherwise. `make ISAL=0` leaves it out.
ISAL    ?= $(shell pkg-config --exists libisal 2>/dev/null && echo 1)
ifeq ($(ISAL),1)
PKGS    += libisal
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN    := -Wall -Wextra -Wpedantic -Wstrict-prototypes -Wshadow -Wno-unused-parameter
APP_CFLAGS := -std=c11 -D_GNU_SOURCE -Iinclude $(WARN) $(PKG_CFLAGS) -MMD -MP
ifeq ($(ISAL),1)
APP_CFLAGS += -DTB_HAVE_ISAL
endif
ifdef CI
APP_CFLAGS += -Werror
endif
CFLAGS  ?= -O2 -g
LDLIBS  := $(PKG_LIBS) -lpthread -lm

BUILD   ?= build

# Reading order (see README "Source map").
SRCS := \
	server/base/err.c server/base/xmalloc.c server/base/log.c server/base/fsutil.c server/base/config.c \
	server/base/sbuf.c server/base/hmap.c server/base/utf8.c server/base/jtok.c server/base/workpool.c server/base/sha256.c server/base/corrix.c server/base/tmheap.c server/base/varint.c \
	server/ingest/instream.c server/ingest/mpart.c server/ingest/logparse.c \
	server/ingest/importer.c server/ingest/import_chrome.c server/ingest/import_chrome_xla.c server/ingest/import_nsys.c server/ingest/import_nsys_rows.c \
	server/store/model.c server/store/sorter.c server/store/budget.c server/store/rundb_schema.c server/store/rundb_writer.c server/store/rundb_drain.c server/store/nesting.c server/store/rundb_spool.c \
	server/store/rundb.c server/store/rundb_renumber.c server/store/scan.c server/store/scan_span.c server/store/nameids.c server/store/facts.c server/store/stats_read.c server/store/rank_read.c server/store/comm_read.c server/store/diff_read.c server/store/analyses_read.c server/store/slice_read.c server/store/findings.c server/store/catalog.c server/store/catalog_query.c server/store/logstore.c \
	server/store/rundb_stage.c \
	server/derive/kclass.c server/derive/ivlist.c server/derive/summary.c server/derive/summary_rank.c server/derive/summary_walk.c server/derive/slice_feed.c \
	server/derive/summary_steps.c server/derive/summary_metrics.c server/derive/summary_memory.c server/derive/summary_report.c \
	server/derive/timeline.c server/derive/timeline_counters.c server/derive/timeline_query.c server/derive/timeline_agg.c \
	server/derive/timeline_flame.c server/derive/timeline_lod.c server/derive/timeline_rows.c server/derive/timeline_stream.c \
	server/derive/diff.c server/derive/ranks.c server/derive/ranks_comm.c server/derive/rules.c server/derive/rules_cap.c server/derive/gpuscan.c \
	$(sort $(wildcard server/derive/rules/*.c)) \
	server/derive/analyses.c server/derive/analyses_load.c $(sort $(wildcard server/derive/analyses/*.c)) server/derive/cp_waits.c server/derive/cp_chain.c \
	server/ingest/ingest_naming.c server/ingest/ingest.c server/ingest/ingest_derive.c server/ingest/ingest_eta.c server/ingest/ingest_service.c \
	server/http/assets.c server/http/conntrack.c server/http/http_req.c server/http/http_auth.c server/http/http.c server/http/http_parse.c server/http/http_send.c server/http/qparam.c server/http/routes.c server/http/http_stream.c \
	server/api/api_runs.c server/api/api_run.c server/api/api_table.c server/api/api_summary.c \
	server/api/api_summary_tables.c server/api/api_summary_memory.c server/api/api_timeline.c \
	server/api/api_slice.c server/api/api_search.c server/api/api_diff.c server/api/api_compare.c \
	server/api/api_ranks.c server/api/api_analyses.c \
	server/api/api_flame.c server/api/api_logs.c server/api/api_live.c server/api/api_projects.c \
	server/cli/cli.c server/cli/cli_analyze.c server/cli/cli_diff.c server/cli/cli_logs.c

OBJS := $(SRCS:server/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/assets_gen.o
LIB  := $(BUILD)/libtraceboard.a
BIN  := $(BUILD)/traceboard

UNIT_SRCS := $(wildcard tests/unit/*/*_test.c)
UNIT_BINS := $(addprefix $(BUILD)/tests/,$(basename $(notdir $(UNIT_SRCS))))
# tests/unit mirrors server/: a test is found in its stage folder.
vpath %_test.c $(sort $(dir $(UNIT_SRCS)))
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tools/%)
FUZZ_SRCS := $(wildcard tests/fuzz/*_fuzz.c)
FUZZ_REPLAY := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz-replay/%)
WEB_FILES := $(shell find web -type f 2>/dev/null | sort)

.PHONY: all run test check unit asan ubsan bench fuzz clean deps test-deps serve demo
all: $(BIN)

$(BUILD)/obj/%.o: server/%.c
	@mkdir -p $(dir $@)
	$(CC) $(APP_CFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/assets_gen.c: $(WEB_FILES) server/gen_assets.sh
	@mkdir -p $(BUILD)
	sh server/gen_assets.sh web > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/assets_gen.o: $(BUILD)/assets_gen.c
	@mkdir -p $(dir $@)
	$(CC) $(APP_CFLAGS) $(CFLAGS) -Wno-overlength-strings -c $< -o $@

$(LIB): $(OBJS)
	rm -f $@ && ar rcs $@ $^

$(BIN): $(BUILD)/obj/main.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/main.o: server/main.c
	@mkdir -p $(dir $@)
	$(CC) $(APP_CFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/tests/%_test: %_test.c $(LIB) tests/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(APP_CFLAGS) $(CFLAGS) -Itests -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/tools/%: tests/tools/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(APP_CFLAGS) $(CFLAGS) -Itests -o $@ $< $(LIB) $(LDLIBS)

# Fuzz targets replayed over their corpora by a tiny main (no libFuzzer needed).
$(BUILD)/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/replay_main.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(APP_CFLAGS) $(CFLAGS) -Itests -o $@ $< tests/fuzz/replay_main.c $(LIB) $(LDLIBS)

unit: $(UNIT_BINS) $(FUZZ_REPLAY) $(TOOL_BINS) $(BIN)

-include $(OBJS:.o=.d) $(BUILD)/obj/main.d

# --- set-up -------------------------------------------------------------------
DEBS_BUILD := cc:gcc make pkg-config libmicrohttpd-dev libsqlite3-dev libjansson-dev zlib1g-dev libisal-dev
DEBS_TEST  := $(DEBS_BUILD) clang node:nodejs npm:npm tsc:node-typescript chromium:chromium python3:python3 sqlite3:sqlite3 time libclang-rt-14-dev pdftoppm:poppler-utils

deps:
	@sh tests/deps.sh $(DEBS_BUILD)

# npm ci installs exactly tests/package-lock.json (playwright-core pinned to a
# release whose engines allow Debian 12's Node 18). It runs again when the lock
# changed (the copy left in node_modules differs) or a package installed is not
# at its locked version (tests/node_deps_ok.mjs).
test-deps:
	@sh tests/deps.sh $(DEBS_TEST)
	@(cmp -s tests/package-lock.json tests/node_modules/.traceboard-lock.json && node tests/node_deps_ok.mjs) 2>/dev/null || \
	  (cd tests && npm ci --no-audit --no-fund --silent && cp package-lock.json node_modules/.traceboard-lock.json)

run: deps
	$(MAKE) $(BIN)
	$(BIN) serve --data-dir ./data --demo tests/data/demo

test: test-deps
	$(MAKE) unit
	sh tests/run.sh $(BUILD)

check: test

# Sanitizer builds go to their own folder so they never mix with normal objects.
asan:
	$(MAKE) BUILD=build-asan CC=clang CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" LDFLAGS="-fsanitize=address,undefined" unit
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 TB_SKIP_BROWSER=1 TB_SANITIZED=1 sh tests/run.sh build-asan

ubsan: asan

bench: $(BIN) $(TOOL_BINS)
	sh tests/bench.sh $(BUILD)

fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined" build-fuzz/libtraceboard.a
	@for f in $(FUZZ_SRCS); do n=$$(basename $$f .c); \
	  clang $(APP_CFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined -Itests -o build-fuzz/$$n $$f build-fuzz/libtraceboard.a $(LDLIBS) || exit 1; \
	  echo "built build-fuzz/$$n"; done

clean:
	rm -rf build build-asan build-fuzz
