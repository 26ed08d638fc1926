# sharness - one GNU Makefile; everything is built under build/.
#   make          build/sharnessd and build/sharness-client
#   make run      install missing packages, build, make dev certs once, run in the foreground
#   make test     install missing packages, build, run every test; last line "N passed, N failed"
#   make asan     the same binaries with ASan+UBSan (then: make asan test)
#   make vm-test  boot real Debian systems (VMS="bookworm bookworm-bpo trixie") and
#                 check build, install, the unit, the verdicts, make run there

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=

WARN    := -std=gnu17 -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wvla -Wimplicit-fallthrough
HARDEN  := -D_FORTIFY_SOURCE=3 -fstack-protector-strong -fstack-clash-protection \
           -fcf-protection -fPIE
OPT     ?= -O2 -g
CFLAGS  += $(OPT) $(WARN) $(HARDEN) -D_GNU_SOURCE -MMD -MP -iquote daemon
LDFLAGS += -pie -Wl,-z,relro,-z,now,-z,noexecstack
LIBS    := -lmicrohttpd -lgnutls -lcjson -lcgroup -lseccomp -lhs -lcrypto -lpthread -lm

ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

DAEMON_LIB_SRCS := $(filter-out daemon/main.c,$(sort $(wildcard daemon/*.c)))
DAEMON_LIB_OBJS := $(DAEMON_LIB_SRCS:%.c=$(BUILD)/%.o)
DAEMON_LIB      := $(BUILD)/libsharnessd.a
UNIT_SRCS       := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS       := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
PROBE_SRCS      := $(sort $(wildcard tests/probes/*.c))
PROBE_BINS      := $(PROBE_SRCS:tests/probes/%.c=$(BUILD)/probes/%)

# Keep the unit tests' objects (make would delete them as intermediates).
.SECONDARY:

.PHONY: all deps test-deps run test unit probes clean asan asan-test format tidy install uninstall bench fuzz stress vm-test vm-deps deb

all: $(BUILD)/sharnessd $(BUILD)/sharness-client

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(DAEMON_LIB): $(DAEMON_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/sharnessd: $(BUILD)/daemon/main.o $(DAEMON_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(DAEMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# Probes run inside the sandbox: small static binaries that report exact errnos.
$(BUILD)/probes/%: tests/probes/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -static -o $@ $<

unit: $(UNIT_BINS)
probes: $(PROBE_BINS)

-include client/client.mk
-include bench/bench.mk
-include tests/fuzz/fuzz.mk
-include tests/stress/stress.mk
-include bench/roundtrip/roundtrip.mk
-include install.mk

deps:
	@scripts/deps.sh

# What the tests need besides: the test profile's toolchains.
test-deps:
	@scripts/deps.sh --test

run: deps all
	@scripts/devcerts.sh
	@scripts/run-dev.sh

test: test-deps all unit probes
	@tests/run.sh

# Real systems: debootstrap images booted with their own kernel and systemd
# (tests/vm/run.sh; needs root, qemu and debootstrap).
vm-deps:
	@command -v debootstrap >/dev/null && command -v qemu-system-x86_64 >/dev/null && command -v qemu-img >/dev/null || \
		{ export DEBIAN_FRONTEND=noninteractive; apt-get update -q >/dev/null; \
		  apt-get install -y -q --no-install-recommends debootstrap qemu-system-x86 qemu-utils >/dev/null; }

vm-test: deps vm-deps all probes deb
	@tests/vm/run.sh $(VMS)

# The Debian package, built in a copy of the tree (debian/make-deb.sh;
# DEB_SRC=REV builds a commit instead of the working tree): $(BUILD)/deb/sharness_*.deb.
deb: deps
	@debian/make-deb.sh $(BUILD)/deb

asan:
	$(MAKE) BUILD=build/asan SAN=1 OPT="-O1 -g" all unit probes

# Every test against the ASan+UBSan binaries (probes stay the normal static ones).
asan-test: test-deps asan probes
	@BUILD=build/asan SHARNESS_SANITIZED=1 ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 tests/run.sh

# Static analysis of the product code with the checks .clang-tidy names
# (and why it leaves some out); any finding fails.
tidy: deps
	clang-tidy --quiet $(sort $(wildcard daemon/*.c client/*.c)) -- -std=gnu17 -D_GNU_SOURCE -iquote daemon

format:
	clang-format -i daemon/*.[ch] client/*.[ch] tests/unit/*.[ch] tests/probes/*.c

clean:
	rm -rf $(BUILD)

-include $(DAEMON_LIB_OBJS:.o=.d) $(BUILD)/daemon/main.d $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%.d)
