# tests/fuzz/fuzz.mk - libFuzzer targets (included by the top Makefile).
#
#   make fuzz              build every target and run each for FUZZ_SECONDS (default 60)
#                          over the committed corpus; new inputs go to build/fuzz/corpus/
#   make fuzz-smoke        the same for FUZZ_SMOKE_SECONDS (default 5) each: the CI run
#   make fuzz-build        only build build/fuzz/fuzz_*
#   make fuzz-merge        minimise build/fuzz/corpus/* into tests/fuzz/corpus/* (to commit)
#
# The daemon sources a target needs are compiled here again with clang and
# coverage instrumentation (build/libsharnessd.a is gcc without coverage).

FUZZ_CC            ?= clang
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_DIR           := $(BUILD)/fuzz
FUZZ_SAN           := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# The daemon's own sources are held to -Werror by the gcc build; clang's
# warnings differ, so only the targets themselves use -Werror here.
FUZZ_DCFLAGS       := -g -O1 $(FUZZ_SAN) -std=gnu17 -D_GNU_SOURCE $(INC_ALL)
FUZZ_CFLAGS        := $(FUZZ_DCFLAGS) -Wall -Wextra -Werror -Wshadow -Wvla \
                      -DFUZZ_PROFILES_DIR='"$(CURDIR)/profiles"'
FUZZ_LIBS          := -lmicrohttpd -lgnutls -lcjson -lcgroup -lseccomp -lhs -lcrypto -lpthread -lm
FUZZ_TARGETS       := request profile config scrub check proxy

# Every daemon source but the mains goes into one instrumented archive; the
# linker takes only the objects a target needs, so the lists never go stale.
FUZZ_DAEMON_SRCS   := $(DAEMON_LIB_SRCS)
FUZZ_DAEMON_OBJS   := $(FUZZ_DAEMON_SRCS:daemon/%.c=$(FUZZ_DIR)/obj/%.o)
FUZZ_LIB           := $(FUZZ_DIR)/libsharnessd-fuzz.a

FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)

.PHONY: fuzz fuzz-smoke fuzz-build fuzz-merge

$(FUZZ_DIR)/obj/%.o: daemon/%.c $(wildcard daemon/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_DCFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_LIB): $(FUZZ_DAEMON_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(FUZZ_LIBS)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke: fuzz-build
	@tests/fuzz/run.sh $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

fuzz-merge: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p tests/fuzz/corpus/$$t $(FUZZ_DIR)/corpus/$$t; \
		$(FUZZ_DIR)/fuzz_$$t -merge=1 tests/fuzz/corpus/$$t $(FUZZ_DIR)/corpus/$$t 2>&1 | tail -1; \
	done
